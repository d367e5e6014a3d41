//! brs-sys must say exactly what include/brs.h says: these tests parse the
//! header and this crate's source and fail on any drift in either direction
//! (a constant or function added, removed, renumbered or retyped).

use brs_sys::*;
use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

fn read(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn header() -> String {
    strip_c_comments(&read("../../../include/brs.h"))
}

fn sys_source() -> String {
    read("src/lib.rs")
        .lines()
        .map(|line| line.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn strip_c_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("unterminated comment") + start + 2;
        out.push(' ');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.lines()
        .map(|line| line.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------

/// The value of every Rust constant, by name (what the compiler sees, not text).
fn rust_constants() -> BTreeMap<&'static str, i64> {
    macro_rules! table {
        ($($name:ident),* $(,)?) => {
            BTreeMap::from([$((stringify!($name), $name as i64)),*])
        };
    }
    table![
        BRS_VERSION_MAJOR,
        BRS_VERSION_MINOR,
        BRS_VERSION_PATCH,
        BRS_VERSION_NUMBER,
        BRS_OK,
        BRS_ERR_NULL_POINTER,
        BRS_ERR_INVALID_ARGUMENT,
        BRS_ERR_UNSUPPORTED,
        BRS_ERR_OUT_OF_RANGE,
        BRS_ERR_NO_MEMORY,
        BRS_ERR_STATE,
        BRS_ERR_INVALID_LENGTH,
        BRS_ERR_TOO_FEW_SAMPLES,
        BRS_ERR_SAMPLE_TOO_LONG,
        BRS_ERR_CAP_INFEASIBLE,
        BRS_ERR_TOO_LARGE,
        BRS_MAX_STEP_SAMPLES,
        BRS_MAX_MICRO_BATCHES,
        BRS_MAX_LENGTH_BUCKETS,
        BRS_MAX_SAMPLE_PATCHES,
        BRS_OPT_BATCH_SIZE,
        BRS_OPT_GRAD_ACCUM,
        BRS_OPT_DP_SIZE,
        BRS_OPT_RANK,
        BRS_OPT_SEED,
        BRS_OPT_SHUFFLE,
        BRS_OPT_DROP_LAST,
        BRS_OPT_MAX_TOKENS,
        BRS_OPT_PACKED,
        BRS_OPT_ALPHA,
        BRS_OPT_INTERCEPT,
        BRS_OPT_STRATEGY,
        BRS_STRATEGY_BALANCED,
        BRS_STRATEGY_RANDOM,
        BRS_STRATEGY_LENGTH_GROUPED,
        BRS_OPT_SYNC,
        BRS_SYNC_MICRO_STEP,
        BRS_SYNC_STEP,
        BRS_OPT_PAD_TO_MULTIPLE_OF,
        BRS_OPT_ENCODER_ALPHA,
        BRS_OPT_ENCODER_INTERCEPT,
        BRS_OPT_MAX_ENCODER_TOKENS,
        BRS_OPT_ENCODER_WEIGHT,
        BRS_OPT_MAX_SHAPES,
        BRS_OPT_CP_SIZE,
        BRS_OPT_MAX_TOKENS_PER_RANK,
        BRS_OPT_CP_COMM_COST,
        BRS_OPT_CP_DEGREES,
        BRS_OPT_MAX_SHAPES_SEARCH,
        BRS_OPT_CP_LATENCY,
        BRS_OPTION_INT,
        BRS_OPTION_DOUBLE,
        BRS_OPTION_SCOPE_RANK,
        BRS_OPTION_SCOPE_SPLIT,
        BRS_OPTION_SCOPE_RUN,
        BRS_LENGTHS_COPY,
        BRS_LENGTHS_BORROW,
        BRS_PLAN_EPOCH,
        BRS_PLAN_STEP,
        BRS_PLAN_NUM_SAMPLES,
        BRS_PLAN_DP_SIZE,
        BRS_PLAN_GRAD_ACCUM,
        BRS_PLAN_TOTAL_PADDED_TOKENS,
        BRS_PLAN_TOTAL_REAL_TOKENS,
        BRS_PLAN_MAX_PADDED_TOKENS,
        BRS_PLAN_MEGABATCH_SIZE,
        BRS_PLAN_TOTAL_ENCODER_TOKENS,
        BRS_PLAN_MAX_ENCODER_TOKENS,
        BRS_PLAN_CP_SIZE,
        BRS_PLAN_MAX_RANK_TOKENS,
        BRS_PLAN_MAX_COST,
        BRS_PLAN_LOWER_BOUND,
        BRS_PLAN_TOTAL_COST,
        BRS_PLAN_MICRO_SYNC_TIME,
        BRS_PLAN_STEP_SYNC_TIME,
        BRS_PLAN_TIME_LOWER_BOUND,
        BRS_PLAN_ENCODER_COST,
        BRS_PLAN_STEP_TIME,
        BRS_PLAN_USEFUL_TIME,
        BRS_PLAN_PADDING_TIME,
        BRS_PLAN_WAITING_TIME,
        BRS_COST_MODEL_FILE_MAX_BYTES,
    ]
}

/// Macros that are not values: the include guard and the export attribute.
const HEADER_NON_VALUES: &[&str] = &["BRS_H", "BRS_API"];

fn parse_c_integer(text: &str) -> Option<i64> {
    let inner = text
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim()
        // An unsigned suffix (4294967295u) keeps a limit above INT_MAX unsigned in C.
        .trim_end_matches(['u', 'U']);
    inner.parse().ok()
}

/// Every `#define BRS_*` of the header with an integer value.
fn header_constants() -> BTreeMap<String, i64> {
    let mut constants = BTreeMap::new();
    for line in header().lines() {
        let mut words = line.trim().splitn(3, char::is_whitespace);
        if words.next() != Some("#define") {
            continue;
        }
        let name = words.next().unwrap_or_default();
        if !name.starts_with("BRS_") || HEADER_NON_VALUES.contains(&name) {
            continue;
        }
        let value = words.next().unwrap_or_default();
        let parsed = parse_c_integer(value)
            .unwrap_or_else(|| panic!("{name}: cannot read the value {value:?}"));
        constants.insert(name.to_string(), parsed);
    }
    constants
}

#[test]
fn every_header_constant_has_its_value_in_rust() {
    let rust = rust_constants();
    let header = header_constants();
    assert!(
        header.len() > 40,
        "the header parser found only {} constants",
        header.len()
    );
    for (name, value) in &header {
        assert_eq!(
            rust.get(name.as_str()),
            Some(value),
            "{name} in brs.h vs brs-sys"
        );
    }
    for name in rust.keys() {
        assert!(
            header.contains_key(*name),
            "{name} is in brs-sys but not in brs.h"
        );
    }
}

#[test]
fn every_rust_constant_is_checked() {
    let checked = rust_constants();
    for line in sys_source().lines() {
        if let Some(rest) = line.trim().strip_prefix("pub const ") {
            let name = rest.split(':').next().unwrap().trim();
            assert!(
                checked.contains_key(name),
                "{name}: add it to rust_constants()"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Function signatures
// ---------------------------------------------------------------------------

/// name -> (parameter types, return type), all spelled as Rust types.
type Signatures = BTreeMap<String, (Vec<String>, String)>;

/// A C type as brs-sys spells it: `const uint64_t **` -> `*mut *const u64`.
fn c_type_to_rust(c_type: &str) -> String {
    let stars = c_type.matches('*').count();
    let base_text = c_type.replace('*', " ");
    let words: Vec<&str> = base_text.split_whitespace().collect();
    let is_const = words.first() == Some(&"const");
    let base = match *words.last().expect("empty C type") {
        "void" => "()",
        "char" => "c_char",
        "double" => "f64",
        "size_t" => "usize",
        "uint32_t" => "u32",
        "uint64_t" => "u64",
        "int32_t" => "i32",
        "int64_t" => "i64",
        other => other, // brs_status, brs_option, brs_plan_key, brs_sampler, brs_plan
    };
    let mut rust = base.to_string();
    for level in 0..stars {
        let pointee_is_const = level == 0 && is_const;
        rust = format!(
            "{} {rust}",
            if pointee_is_const { "*const" } else { "*mut" }
        );
    }
    rust
}

/// Splits `const char *brs_strerror` into its type and its name.
fn split_declarator(declarator: &str) -> (String, String) {
    let declarator = declarator.trim();
    let name_start = declarator
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    (
        declarator[..name_start].to_string(),
        declarator[name_start..].to_string(),
    )
}

fn header_functions() -> Signatures {
    let text = header();
    let mut functions = Signatures::new();
    // Declarations start a line with BRS_API (its #define lines do not).
    for declaration in text.split("\nBRS_API ").skip(1) {
        let declaration = declaration.split(';').next().unwrap();
        let (head, params) = declaration.split_once('(').expect("a function declaration");
        let params = params.trim_end().trim_end_matches(')');
        let (ret, name) = split_declarator(head);
        let params = params
            .split(',')
            .map(str::trim)
            .filter(|p| *p != "void" && !p.is_empty())
            .map(|p| c_type_to_rust(&split_declarator(p).0))
            .collect();
        functions.insert(name, (params, c_type_to_rust(&ret)));
    }
    functions
}

fn rust_functions() -> Signatures {
    let source = sys_source();
    let block = source
        .split("extern \"C\" {")
        .nth(1)
        .expect("an extern block");
    let mut functions = Signatures::new();
    for declaration in block.split("pub fn ").skip(1) {
        let declaration = declaration.split(';').next().unwrap();
        let (name, rest) = declaration.split_once('(').unwrap();
        let (params, ret) = rest.rsplit_once(')').unwrap();
        let params = params
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| normalise(p.split_once(':').unwrap().1))
            .collect();
        let ret = ret
            .trim()
            .strip_prefix("->")
            .map_or("()".to_string(), normalise);
        functions.insert(name.trim().to_string(), (params, ret));
    }
    functions
}

fn normalise(rust_type: &str) -> String {
    rust_type.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_header_function_is_declared_with_its_signature() {
    let header = header_functions();
    let rust = rust_functions();
    assert!(
        header.len() >= 24,
        "the header parser found only {} functions",
        header.len()
    );
    for (name, signature) in &header {
        assert_eq!(
            rust.get(name),
            Some(signature),
            "{name}: brs.h vs brs-sys (params, return)"
        );
    }
    for name in rust.keys() {
        assert!(
            header.contains_key(name),
            "{name} is in brs-sys but not in brs.h"
        );
    }
}

#[test]
fn c_types_translate_as_brs_sys_spells_them() {
    assert_eq!(c_type_to_rust("const uint64_t **"), "*mut *const u64");
    assert_eq!(c_type_to_rust("brs_sampler **"), "*mut *mut brs_sampler");
    assert_eq!(c_type_to_rust("const brs_plan *"), "*const brs_plan");
    assert_eq!(c_type_to_rust("size_t "), "usize");
    assert_eq!(
        split_declarator("const char *brs_strerror").1,
        "brs_strerror"
    );
}
