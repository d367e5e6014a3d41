"""libbrs's benchmarks (bench/README.md): one entry, `python -m brsbench <study>`; the studies'
table is brsbench.__main__.STUDIES (`python -m brsbench --list`)."""
