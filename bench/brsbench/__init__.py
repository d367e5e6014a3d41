"""libbrs benchmarks against the real peers (see bench/README.md); run through bench/run."""
