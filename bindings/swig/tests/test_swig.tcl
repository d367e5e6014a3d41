# The Tcl build of brs.i reproduces the golden vectors and raises errors.
#     tclsh test_swig.tcl PATH/brs_swig_tcl.so VECTORS_DIR
lassign $argv module vectors_dir
load $module Brs_swig

# A small JSON reader for the vector files (no tcllib here): objects become
# dicts, arrays lists, strings and numbers their text. No string escapes.
namespace eval json {
    variable text
    variable pos

    proc parse {input} {
        variable text $input
        variable pos 0
        return [value]
    }
    proc skip_space {} {
        variable text
        variable pos
        while {[string is space -strict [string index $text $pos]]} { incr pos }
    }
    proc next_char {} {
        variable text
        variable pos
        skip_space
        set c [string index $text $pos]
        incr pos
        return $c
    }
    proc value {} {
        variable text
        variable pos
        skip_space
        switch -- [string index $text $pos] {
            "\{" { return [members object] }
            "\[" { return [members array] }
            "\"" { return [str] }
            default { return [number] }
        }
    }
    # The members of an object (a dict) or an array (a list).
    proc members {kind} {
        variable text
        variable pos
        incr pos
        set result {}
        set close [expr {$kind eq "object" ? "\}" : "\]"}]
        skip_space
        if {[string index $text $pos] eq $close} { incr pos; return $result }
        while 1 {
            if {$kind eq "object"} {
                skip_space
                set key [str]
                if {[next_char] ne ":"} { error "json: expected : at $pos" }
                dict set result $key [value]
            } else {
                lappend result [value]
            }
            set c [next_char]
            if {$c eq $close} { return $result }
            if {$c ne ","} { error "json: expected , or $close at $pos" }
        }
    }
    proc str {} {
        variable text
        variable pos
        set end [string first "\"" $text [expr {$pos + 1}]]
        set s [string range $text [expr {$pos + 1}] [expr {$end - 1}]]
        set pos [expr {$end + 1}]
        return $s
    }
    proc number {} {
        variable text
        variable pos
        if {![regexp -start $pos -indices {\A-?[0-9][0-9.eE+-]*} $text range]} {
            error "json: unexpected character at $pos"
        }
        set pos [expr {[lindex $range 1] + 1}]
        return [string range $text {*}$range]
    }
}

set failures 0
proc check {what got expected} {
    if {$got ne $expected} {
        puts stderr "FAIL $what:\n  got      $got\n  expected $expected"
        incr ::failures
    }
}

# pad_to_multiple_of and length_buckets are in a vector's options only when set;
# max_shapes and sync (by its value's name, when set) only in those of shapes/,
# given by name after the values by position.
proc new_vector_sampler {vector} {
    set o [dict get $vector options]
    set multiple [expr {[dict exists $o pad_to_multiple_of] ? [dict get $o pad_to_multiple_of] : 1}]
    set named {}
    foreach key {max_shapes sync} {
        if {[dict exists $o $key]} { lappend named $key [dict get $o $key] }
    }
    set sampler [new_Sampler [dict get $vector lengths] [dict get $o batch_size] \
        [dict get $o grad_accum] [dict get $o dp_size] 0 [dict get $o seed] \
        [dict get $o shuffle] [dict get $o drop_last] [dict get $o alpha] \
        [dict get $o intercept] [dict get $o max_tokens] [dict get $o packed] $multiple \
        {*}$named]
    if {[dict exists $o length_buckets]} {
        $sampler set_length_buckets [dict get $o length_buckets]
        $sampler validate
    }
    return $sampler
}

proc check_plan {name sampler plan} {
    set where "$name epoch [dict get $plan epoch] step [dict get $plan step]"
    $sampler set_epoch [dict get $plan epoch]
    set indices {}
    set stats {}
    foreach rank [dict get $plan micro_batches] {
        set rank_indices {}
        set rank_stats {}
        foreach micro $rank {
            lappend rank_indices [dict get $micro indices]
            lappend rank_stats [list [dict get $micro padded_tokens] \
                [dict get $micro real_tokens] [expr {double([dict get $micro cost])}]]
        }
        lappend indices $rank_indices
        lappend stats $rank_stats
    }
    check "$where indices" [$sampler plan [dict get $plan step]] $indices
    # Costs compare as doubles: %.17g text read back is the same double.
    set got_stats {}
    foreach rank [$sampler stats] {
        set r {}
        foreach m $rank { lappend r [list {*}[lrange $m 0 1] [expr {double([lindex $m 2])}]] }
        lappend got_stats $r
    }
    check "$where stats" $got_stats $stats
    check "$where max_cost" [expr {[$sampler plan_double $::BRS_PLAN_MAX_COST] == \
        [dict get $plan max_cost]}] 1
    check "$where lower_bound" [expr {[$sampler plan_double $::BRS_PLAN_LOWER_BOUND] == \
        [dict get $plan lower_bound]}] 1
}

set count 0
foreach file [lsort [glob -directory $vectors_dir *.json]] {
    set f [open $file]
    set vector [json::parse [read $f]]
    close $f
    set name [dict get $vector name]
    set sampler [new_vector_sampler $vector]
    check "$name fingerprint" [$sampler fingerprint] [dict get $vector fingerprint]
    check "$name steps" [$sampler steps_per_epoch] [dict get $vector steps_per_epoch]
    foreach plan [dict get $vector plans] { check_plan $name $sampler $plan }
    delete_Sampler $sampler
    incr count
}
check "number of vectors" [expr {$count > 0}] 1

# The vectors of shapes/ (max_shapes, sync) also hold the shape vocabulary.
set shape_count 0
foreach file [lsort [glob -nocomplain -directory [file join $vectors_dir shapes] *.json]] {
    set f [open $file]
    set vector [json::parse [read $f]]
    close $f
    set name [dict get $vector name]
    set sampler [new_vector_sampler $vector]
    check "$name max_shapes" [$sampler get_option max_shapes] \
        [dict get $vector options max_shapes]
    check "$name vocabulary" [$sampler shape_vocabulary] [dict get $vector vocabulary]
    check "$name fingerprint" [$sampler fingerprint] [dict get $vector fingerprint]
    check "$name steps" [$sampler steps_per_epoch] [dict get $vector steps_per_epoch]
    foreach plan [dict get $vector plans] { check_plan $name $sampler $plan }
    delete_Sampler $sampler
    incr shape_count
}
check "number of shape vectors" [expr {$shape_count > 0}] 1

# Errors: a Tcl error "ValueError <brs_strerror> (brs status N): <detail>".
proc check_error {what script status} {
    set code [catch {uplevel 1 $script} message options]
    check "$what raises" $code 1
    check "$what errorcode" [dict get $options -errorcode] {SWIG ValueError}
    set prefix "ValueError [strerror $status] (brs status $status): "
    check "$what message" [string range $message 0 [string length $prefix]-1] $prefix
    return [string range $message [string length $prefix] end]
}
set detail [check_error "zero length" {new_Sampler {5 9 0 7} 1} $BRS_ERR_INVALID_LENGTH]
check "zero length names index 2" [regexp {\m2\M} $detail] 1
set sampler [new_Sampler {30 10 50 20} 2]
check_error "step out of range" {$sampler plan 99} $BRS_ERR_OUT_OF_RANGE
check_error "dp_size 0" {$sampler set_int $BRS_OPT_DP_SIZE 0} $BRS_ERR_OUT_OF_RANGE
check "sampler still usable" [llength [$sampler plan 1]] 1
delete_Sampler $sampler
check "bad length raises" [catch {new_Sampler {5 x} 1} message] 1
check "bad length message" $message "ValueError lengths\[1\] is not an integer in 0 .. 2**32-1"

# Length buckets, the default ladder and the epoch's shapes: lists in and out.
set lengths {16 1024 300 77 45 610 128 90}
set sampler [new_Sampler $lengths 2 1 2 0 0 1 1 0.001 0.0 0 0 64]
check "pad_to_multiple_of" [$sampler get_int $BRS_OPT_PAD_TO_MULTIPLE_OF] 64
check "no buckets" [$sampler length_buckets] {}
set ladder [$sampler bucket_ladder]
check "ladder rounded to 64" [lsort -unique [lmap b $ladder {expr {$b % 64}}]] 0
check "ladder holds the longest" [expr {[lindex $ladder end] >= 1024}] 1
check "coarser ladder" [expr {[llength [$sampler bucket_ladder 1]] < [llength $ladder]}] 1
check_error "ladder steps 65" {$sampler bucket_ladder 65} $BRS_ERR_OUT_OF_RANGE
$sampler set_length_buckets $ladder
check "buckets read back" [$sampler length_buckets] $ladder
set walked {}
for {set step 0} {$step < [$sampler steps_per_epoch]} {incr step} {
    $sampler plan $step
    set rank0 [lindex [$sampler stats] 0]
    set indices [lindex [$sampler plan $step] 0]
    foreach m $rank0 batch $indices {
        set size [llength $batch]
        lappend walked [list $size [expr {[lindex $m 0] / $size}]]
    }
}
set walked [lsort -unique -command {apply {{a b} {
    expr {[lindex $a 0] != [lindex $b 0] ? [lindex $a 0] - [lindex $b 0]
                                          : [lindex $a 1] - [lindex $b 1]}}}} $walked]
check "shapes are the plans' shapes" [$sampler shapes] $walked
check_error "buckets not increasing" {$sampler set_length_buckets {128 64}} \
    $BRS_ERR_INVALID_ARGUMENT
check "refused buckets kept" [$sampler length_buckets] $ladder
$sampler set_length_buckets {64 128 256}
set detail [check_error "sample above the last bucket" {$sampler validate} \
    $BRS_ERR_SAMPLE_TOO_LONG]
check "names the last bucket" [string match "*last length bucket 256*" $detail] 1
$sampler set_length_buckets {}
check "buckets cleared" [$sampler length_buckets] {}
check "bad bucket message" [catch {$sampler set_length_buckets {64 y}} message] 1
check "bad bucket names it" $message "ValueError buckets\[1\] is not an integer in 0 .. 2**32-1"
delete_Sampler $sampler

# Encoder loads: a list of patch-count lists in, each micro-batch's encoder figures out.
set lengths {900 40 850 45 800 50 950 42}
set images {{} {256 256} {} {512} {} {768 768} {} {256}}
set sampler [new_Sampler $lengths 2 2 2 0 0 0]
$sampler set_encoder_loads $images
check "encoder load" [$sampler encoder_load 5] {2 1536}
set plan [$sampler plan 0]
set total 0
foreach rank $plan encoder_rank [$sampler encoder_stats] {
    foreach batch $rank encoder $encoder_rank {
        set patches 0
        set n_images 0
        foreach i $batch {
            set sample [lindex $images $i]
            incr n_images [llength $sample]
            foreach p $sample { incr patches $p }
        }
        check "patches of $batch" [lrange $encoder 0 1] [list $patches $n_images]
        incr total $patches
    }
}
check "total encoder tokens" [$sampler plan_int $BRS_PLAN_TOTAL_ENCODER_TOKENS] $total
set detail [check_error "an image of 0 patches" {$sampler set_encoder_loads {{} {0}}} \
    $BRS_ERR_INVALID_ARGUMENT]
check "names the image" [string match "*is 0*" $detail] 1
check "loads kept" [$sampler encoder_load 5] {2 1536}
check "bad patch count" [catch {$sampler set_encoder_loads {{} {-3}}} message] 1
check "bad patch count message" $message \
    "ValueError images\[1\] holds a patch count that is not in 1 .. 2**32-1"
$sampler set_encoder_loads {}
check "loads cleared" [$sampler encoder_load 5] {0 0}
set positions [lsort -integer [concat {*}[concat {*}[$sampler plan_batch $lengths $images]]]]
check "batch with images: every position once" $positions {0 1 2 3 4 5 6 7}
check "batch encoder tokens" [$sampler plan_int $BRS_PLAN_TOTAL_ENCODER_TOKENS] $total
set detail [check_error "a batch image of 0 patches" \
    {$sampler plan_batch $lengths {{} {0} {} {} {} {} {} {}}} $BRS_ERR_INVALID_ARGUMENT]
check "names the batch image" [string match "*is 0*" $detail] 1
delete_Sampler $sampler

# Options by their names, after the lengths (and after any given by position,
# in the order of the 1.4 constructor): every option of the library's table.
set lengths {16 1024 300 77 45 610 128 90}
set sampler [new_Sampler $lengths batch_size 2 dp_size 2 sync step alpha 0.25]
check "named batch_size" [$sampler get_int $BRS_OPT_BATCH_SIZE] 2
check "named sync" [$sampler get_option sync] $BRS_SYNC_STEP
check "named alpha" [$sampler get_double $BRS_OPT_ALPHA] 0.25
$sampler set_option strategy length_grouped
check "set_option by value name" [$sampler get_option strategy] $BRS_STRATEGY_LENGTH_GROUPED
delete_Sampler $sampler
set sampler [new_Sampler $lengths 2 2 strategy random]
check "positional, then named" [list [$sampler get_option grad_accum] \
    [$sampler get_option strategy]] [list 2 $BRS_STRATEGY_RANDOM]
check "not given: the library's default" [$sampler get_option alpha] \
    [option_default_double $BRS_OPT_ALPHA]
delete_Sampler $sampler
set count_options [option_count]
set named {}
for {set i 0} {$i < $count_options} {incr i} {
    lappend named [option_name [option_key $i]]
}
check "sync and strategy in the table" \
    [expr {"sync" in $named && "strategy" in $named}] 1
check_error "unknown name" {new_Sampler $lengths no_such_option 1} $BRS_ERR_UNSUPPORTED
check_error "no value name" {new_Sampler $lengths sync never} $BRS_ERR_OUT_OF_RANGE
check_error "a name without a value" {new_Sampler $lengths batch_size} \
    $BRS_ERR_INVALID_ARGUMENT

if {$failures} {
    puts stderr "$failures failures"
    exit 1
}
puts "ok: $count golden vectors, $shape_count shape vectors and the errors"
