//! The golden vectors of tests/vectors (written by the C library's
//! gen_vectors, format in tests/vectors/README.md): this binding must
//! reproduce every plan exactly, through Plan and through the iterator.
//! The vectors of tests/vectors/shapes (max_shapes, and sync when set) also
//! pin the sampler's shape vocabulary. BRS_VECTORS_DIR overrides the folder
//! (e.g. freshly generated vectors).

mod common;

use brs::{Sampler, SamplerBuilder};
use common::json::Json;
use std::path::PathBuf;

fn vectors_dir() -> PathBuf {
    std::env::var_os("BRS_VECTORS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::repository().join("tests/vectors"))
}

/// The *.json files directly in `dir`, sorted.
fn vector_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

/// The vector's options; pad_to_multiple_of and length_buckets are there
/// only when set, max_shapes and sync (by its value's name) only in the
/// vectors of shapes/.
fn builder(options: &Json) -> SamplerBuilder {
    let int = |key: &str| options.get(key).as_u64();
    let cap = int("max_tokens");
    let mut builder = Sampler::builder();
    if let Some(max_shapes) = options.find("max_shapes") {
        builder = builder.option("max_shapes", max_shapes.as_u64());
    }
    if let Some(sync) = options.find("sync") {
        builder = builder.option("sync", sync.as_str());
    }
    if let Some(multiple) = options.find("pad_to_multiple_of") {
        builder = builder.pad_to_multiple_of(multiple.as_u64());
    }
    if let Some(buckets) = options.find("length_buckets") {
        let buckets: Vec<u32> = buckets
            .as_array()
            .iter()
            .map(|b| u32::try_from(b.as_u64()).unwrap())
            .collect();
        builder = builder.length_buckets(&buckets);
    }
    builder
        .per_device_batch_size(int("batch_size"))
        .grad_accum(int("grad_accum"))
        .dp_size(int("dp_size"))
        .seed(int("seed"))
        .shuffle(int("shuffle") != 0)
        .drop_last(int("drop_last") != 0)
        .alpha(options.get("alpha").as_f64())
        .intercept(options.get("intercept").as_f64())
        .max_tokens(Some(cap).filter(|&c| c != 0))
        .packed(int("packed") != 0)
}

fn indices(batch: &Json) -> Vec<u64> {
    batch
        .get("indices")
        .as_array()
        .iter()
        .map(Json::as_u64)
        .collect()
}

/// Every plan of the vector through Sampler::plan_at, statistics included.
fn check_plans(name: &str, sampler: &Sampler<'_>, plans: &[Json]) {
    for expected in plans {
        let (epoch, step) = (
            expected.get("epoch").as_u64(),
            expected.get("step").as_u64(),
        );
        let at = format!("{name} epoch {epoch} step {step}");
        let plan = sampler
            .plan_at(epoch, step)
            .unwrap_or_else(|e| panic!("{at}: {e}"));
        let stats = plan.stats();
        assert_eq!(
            stats.max_cost,
            expected.get("max_cost").as_f64(),
            "{at}: max_cost"
        );
        assert_eq!(
            stats.lower_bound,
            expected.get("lower_bound").as_f64(),
            "{at}: lower_bound"
        );
        let ranks = expected.get("micro_batches").as_array();
        assert_eq!(ranks.len() as u64, plan.dp_size(), "{at}: ranks");
        for (rank, micro_batches) in ranks.iter().enumerate() {
            let micro_batches = micro_batches.as_array();
            assert_eq!(
                micro_batches.len() as u64,
                plan.grad_accum(),
                "{at}: micro-steps"
            );
            for (micro, batch) in micro_batches.iter().enumerate() {
                let (rank, micro) = (rank as u64, micro as u64);
                let slot = format!("{at} rank {rank} micro {micro}");
                assert_eq!(
                    plan.micro_batch(rank, micro).unwrap(),
                    indices(batch),
                    "{slot}"
                );
                let got = plan.micro_batch_stats(rank, micro).unwrap();
                assert_eq!(
                    got.padded_tokens,
                    batch.get("padded_tokens").as_u64(),
                    "{slot}"
                );
                assert_eq!(got.real_tokens, batch.get("real_tokens").as_u64(), "{slot}");
                assert_eq!(got.cost, batch.get("cost").as_f64(), "{slot}: cost");
            }
        }
    }
}

/// Every rank's iterator yields the vector's micro-batches at their positions.
fn check_iterators(name: &str, builder: &SamplerBuilder, lengths: &[u32], plans: &[Json]) {
    for expected in plans {
        let (epoch, step) = (
            expected.get("epoch").as_u64(),
            expected.get("step").as_u64(),
        );
        for (rank, micro_batches) in expected.get("micro_batches").as_array().iter().enumerate() {
            let mut sampler = builder
                .clone()
                .rank(rank as u64)
                .build_borrowed(lengths)
                .unwrap();
            sampler.set_epoch(epoch);
            let micro_batches = micro_batches.as_array();
            let start = step as usize * micro_batches.len();
            let yielded = sampler
                .micro_batches()
                .unwrap()
                .skip(start)
                .take(micro_batches.len());
            for (micro, (got, batch)) in yielded.zip(micro_batches).enumerate() {
                let at = format!("{name} epoch {epoch} step {step} rank {rank} micro {micro}");
                assert_eq!(got.unwrap(), indices(batch), "{at}: iterator");
            }
        }
    }
}

fn check_vector(vector: &Json) {
    let name = vector.get("name").as_str();
    let lengths: Vec<u32> = vector
        .get("lengths")
        .as_array()
        .iter()
        .map(|l| l.as_u64() as u32)
        .collect();
    let builder = builder(vector.get("options"));
    let sampler = builder
        .build(&lengths)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let fingerprint = format!("{:016x}", sampler.fingerprint().unwrap());
    assert_eq!(
        fingerprint,
        vector.get("fingerprint").as_str(),
        "{name}: fingerprint"
    );
    let steps = vector.get("steps_per_epoch").as_u64();
    assert_eq!(
        sampler.steps_per_epoch().unwrap(),
        steps,
        "{name}: steps_per_epoch"
    );
    if let Some(vocabulary) = vector.find("vocabulary") {
        let expected: Vec<(u64, u64)> = vocabulary
            .as_array()
            .iter()
            .map(|pair| {
                let pair = pair.as_array();
                assert_eq!(pair.len(), 2, "{name}: a vocabulary pair");
                (pair[0].as_u64(), pair[1].as_u64())
            })
            .collect();
        let got = sampler
            .shape_vocabulary()
            .unwrap_or_else(|e| panic!("{name}: shape_vocabulary: {e}"));
        assert_eq!(got, expected, "{name}: vocabulary");
    }
    let plans = vector.get("plans").as_array();
    assert!(!plans.is_empty(), "{name}: no plans");
    check_plans(name, &sampler, plans);
    check_iterators(name, &builder, &lengths, plans);
}

#[test]
fn every_golden_vector_is_reproduced() {
    let files = vector_files(&vectors_dir());
    if files.is_empty() {
        println!(
            "note: no golden vectors in {} yet; nothing checked",
            vectors_dir().display()
        );
        return;
    }
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let vector = Json::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        check_vector(&vector);
    }
    println!("{} golden vectors reproduced", files.len());
}

#[test]
fn every_shape_vector_is_reproduced() {
    let dir = vectors_dir().join("shapes");
    let files = vector_files(&dir);
    if files.is_empty() {
        println!(
            "note: no shape vectors in {}; nothing checked",
            dir.display()
        );
        return;
    }
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let vector = Json::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = vector.get("name").as_str();
        assert!(
            vector.get("options").find("max_shapes").is_some(),
            "{name}: a shape vector without max_shapes"
        );
        assert!(
            vector.find("vocabulary").is_some(),
            "{name}: a shape vector without its vocabulary"
        );
        check_vector(&vector);
    }
    println!("{} shape vectors reproduced", files.len());
}

#[test]
fn the_json_reader_reads_what_the_vectors_hold() {
    let text = r#" {"name": "a\"b\\c\u00e9\ud83d\ude00", "n": [0, 18446744073709551615, -2.5e-3],
                    "empty": [], "o": {}, "t": true, "f": false, "z": null} "#;
    let json = Json::parse(text).unwrap();
    assert_eq!(json.get("name").as_str(), "a\"b\\c\u{e9}\u{1F600}");
    let numbers = json.get("n").as_array();
    assert_eq!((numbers[0].as_u64(), numbers[1].as_u64()), (0, u64::MAX));
    assert_eq!(numbers[2].as_f64(), -0.0025);
    assert_eq!(json.get("empty").as_array().len(), 0);
    assert_eq!(json.get("o"), &Json::Object(Vec::new()));
    assert_eq!(
        (json.get("t"), json.get("z")),
        (&Json::Bool(true), &Json::Null)
    );
    assert_eq!(json.get("f"), &Json::Bool(false));
    for bad in [
        "",
        "[1,]",
        "{\"a\" 1}",
        "[1] 2",
        "\"open",
        "nul",
        "\"\\ud83d\"",
    ] {
        assert!(Json::parse(bad).is_err(), "{bad:?} should not parse");
    }
}
