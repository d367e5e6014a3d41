//! libbrs's readers of docs/formats.md, through brs::LengthsFile and
//! brs::CostModelFile, against tests/vectors/formats/manifest.json: the
//! same vectors the brs command, Python and Julia read, so every surface
//! accepts and refuses the same files with the same phrases.

mod common;

use brs::{CostModelFile, LengthsFile};
use common::json::Json;
use std::path::PathBuf;

fn formats() -> PathBuf {
    common::repository().join("tests/vectors/formats")
}

fn manifest() -> Json {
    let path = formats().join("manifest.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Json::parse(&text).unwrap()
}

fn numbers(values: &Json) -> Vec<u64> {
    values.as_array().iter().map(Json::as_u64).collect()
}

/// "" when the error has every phrase of the case, else what is missing.
fn refused(case: &Json, message: &str) -> String {
    let missing: Vec<&str> = case
        .get("error")
        .as_array()
        .iter()
        .map(Json::as_str)
        .filter(|phrase| !message.contains(phrase))
        .collect();
    if missing.is_empty() {
        String::new()
    } else {
        format!("{message:?} lacks {missing:?}")
    }
}

fn is_accepted(case: &Json) -> bool {
    case.get("accept") == &Json::Bool(true)
}

/// What reading a lengths vector gave, against the manifest ("" when equal).
fn check_lengths(case: &Json, read: brs::Result<LengthsFile>) -> String {
    match (is_accepted(case), read) {
        (true, Ok(file)) => {
            let lengths: Vec<u64> = file.lengths().iter().map(|&l| u64::from(l)).collect();
            if lengths != numbers(case.get("values")) {
                return format!("read {lengths:?}");
            }
            let images: Vec<Vec<u64>> = (0..lengths.len())
                .map(|i| file.images(i).iter().map(|&p| u64::from(p)).collect())
                .collect();
            let expected: Vec<Vec<u64>> = match case.find("images") {
                Some(images) => images.as_array().iter().map(numbers).collect(),
                None => vec![Vec::new(); lengths.len()],
            };
            if images == expected {
                String::new()
            } else {
                format!("images {images:?}, expected {expected:?}")
            }
        }
        (true, Err(e)) => format!("refused: {e}"),
        (false, Ok(_)) => "accepted, expected refused".to_string(),
        (false, Err(e)) => refused(case, e.message()),
    }
}

fn check_cost_model(case: &Json, read: brs::Result<CostModelFile>) -> String {
    match (is_accepted(case), read) {
        (true, Ok(model)) => {
            let cap = match case.get("max_tokens") {
                Json::Null => None,
                cap => Some(cap.as_u64()),
            };
            let want = (
                case.get("alpha").as_f64(),
                case.get("intercept").as_f64(),
                cap,
            );
            let got = (model.alpha(), model.intercept(), model.max_tokens());
            if got == want {
                String::new()
            } else {
                format!("read {got:?}, expected {want:?}")
            }
        }
        (true, Err(e)) => format!("refused: {e}"),
        (false, Ok(_)) => "accepted, expected refused".to_string(),
        (false, Err(e)) => refused(case, e.message()),
    }
}

fn failures(kind: &str, check: impl Fn(&Json, &PathBuf) -> String) -> Vec<String> {
    let manifest = manifest();
    let cases = manifest.get(kind).as_array();
    assert!(!cases.is_empty(), "no {kind} vectors");
    cases
        .iter()
        .filter_map(|case| {
            let file = case.get("file").as_str();
            let problem = check(case, &formats().join(file));
            (!problem.is_empty()).then(|| format!("{file}: {problem}"))
        })
        .collect()
}

#[test]
fn every_lengths_vector_reads_as_the_manifest_says() {
    let problems = failures("lengths", |case, path| {
        check_lengths(case, LengthsFile::read(path))
    });
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn lengths_vectors_read_the_same_whole_and_from_a_stream() {
    let problems = failures("lengths", |case, path| {
        let bytes = std::fs::read(path).unwrap();
        let whole = check_lengths(case, LengthsFile::parse(&bytes, "vector"));
        let streamed = check_lengths(case, LengthsFile::from_reader(&bytes[..], "vector"));
        if whole.is_empty() && streamed.is_empty() {
            String::new()
        } else {
            format!("whole: {whole} / stream: {streamed}")
        }
    });
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_cost_model_vector_reads_as_the_manifest_says() {
    let problems = failures("cost_model", |case, path| {
        check_cost_model(case, CostModelFile::read(path))
    });
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn messages_name_the_file_and_the_line() {
    let error = LengthsFile::parse(b"5\n6\n12 12,x\n", "data.lengths").unwrap_err();
    assert_eq!(error.code(), brs::ErrorCode::InvalidArgument);
    assert!(error
        .message()
        .ends_with("data.lengths line 3: '12,x' is not a list of image loads: write the length, then optionally each image's patch count, comma-separated"));
    let missing = LengthsFile::read(formats().join("no-such.lengths")).unwrap_err();
    assert!(missing.message().contains("cannot open lengths file"));
}

#[test]
fn a_calibrated_model_gives_every_value() {
    let model = CostModelFile::read(formats().join("cost_model/accept_calibrated.json")).unwrap();
    assert!(model.seconds_per_unit().is_some_and(|s| s > 0.0));
    assert_eq!(
        model.json("source").unwrap().as_deref(),
        Some("\"calibrated\"")
    );
    assert_eq!(model.int("version").unwrap(), Some(1));
    assert!(
        model.double("model").is_err(),
        "a string key read as a number"
    );
}
