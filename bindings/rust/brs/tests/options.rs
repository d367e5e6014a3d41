//! The option table as the safe wrapper reads it.

use brs::{option, options, OptionValue};

#[test]
fn every_option_has_name_help_and_a_default_within_bounds() {
    let all = options();
    assert!(all.len() >= 13);
    for o in &all {
        assert!(!o.name.is_empty() && !o.help.is_empty(), "{o:?}");
        match o.value {
            OptionValue::Int {
                default,
                lower,
                upper,
            } => assert!(lower <= default && default <= upper),
            OptionValue::Double {
                default,
                lower,
                upper,
            } => assert!(lower <= default && default <= upper),
        }
    }
    let names: Vec<&str> = all.iter().map(|o| o.name).collect();
    for wanted in [
        "batch_size",
        "grad_accum",
        "dp_size",
        "rank",
        "alpha",
        "strategy",
        "sync",
    ] {
        assert!(names.contains(&wanted), "{wanted} missing from {names:?}");
    }
}

#[test]
fn enum_options_name_their_values() {
    assert_eq!(
        option("strategy").unwrap().value_names,
        ["balanced", "random", "length_grouped"]
    );
    assert_eq!(option("sync").unwrap().value_names, ["micro_step", "step"]);
    assert!(option("shuffle").unwrap().value_names.is_empty());
    assert_eq!(
        option("alpha").unwrap().value,
        OptionValue::Double {
            default: 0.001,
            lower: 0.0,
            upper: 1000.0
        }
    );
    assert!(option("per_device_batch_size").is_none());
}
