//! The readers of the two file formats of docs/formats.md: a lengths file
//! (each sample's token count, and the encoder loads of its images) and a
//! cost-model file (the JSON that calibration writes). Both are libbrs's
//! own readers, shared with the brs command and every binding, so a file is
//! accepted or refused, with the same message, whatever reads it.

use crate::error::{check, owned, Error, ErrorCode, Result};
use brs_sys as sys;
use std::ffi::{c_char, CString};
use std::io::Read;
use std::path::Path;
use std::ptr::{null, null_mut, NonNull};

/// Bytes handed to the lengths reader at a time (the brs command's too).
const CHUNK_SIZE: usize = 1 << 16;

/// A file name for the library, which escapes what a terminal must not see.
fn c_name(name: &str) -> Result<CString> {
    CString::new(name)
        .map_err(|_| Error::new(ErrorCode::InvalidArgument, "a file name holds a NUL byte"))
}

fn unreadable(what: &str, error: std::io::Error) -> Error {
    Error::new(ErrorCode::InvalidArgument, &format!("{what}: {error}"))
}

/// A lengths file as read: its lengths and each sample's image loads.
///
/// ```no_run
/// let file = brs::LengthsFile::read("data.lengths")?;
/// let sampler = brs::Sampler::builder().build(file.lengths())?;
/// for (sample, &length) in file.lengths().iter().enumerate() {
///     println!("{length} tokens, images of {:?} patches", file.images(sample));
/// }
/// # Ok::<(), brs::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LengthsFile {
    lengths: Vec<u32>,
    patches: Vec<u32>,
    offsets: Vec<u64>,
}

/// Owns one brs_lengths_file handle for the duration of a read.
struct LengthsReader(NonNull<sys::brs_lengths_file>);

impl LengthsReader {
    fn new() -> Result<LengthsReader> {
        let mut raw = null_mut();
        // SAFETY: an out-parameter for a new handle.
        check(unsafe { sys::brs_lengths_file_new(&mut raw) }, String::new)?;
        NonNull::new(raw)
            .map(LengthsReader)
            .ok_or_else(|| Error::new(ErrorCode::NoMemory, ""))
    }

    fn check(&self, status: i32) -> Result<()> {
        // SAFETY: the handle is live; the message is copied before any other call.
        check(status, || unsafe {
            owned(sys::brs_lengths_file_last_error(self.0.as_ptr()))
        })
    }

    fn feed(&self, bytes: &[u8]) -> i32 {
        // SAFETY: the handle is live; bytes are read during the call only.
        unsafe {
            sys::brs_lengths_file_feed(
                self.0.as_ptr(),
                bytes.as_ptr().cast::<c_char>(),
                bytes.len(),
            )
        }
    }

    /// A copy of what the reader holds after a finished read.
    fn take(&self) -> Result<LengthsFile> {
        let (mut lengths, mut count) = (null(), 0usize);
        let (mut patches, mut offsets) = (null(), null());
        let raw = self.0.as_ptr();
        // SAFETY: out-parameters; the arrays live until the handle is freed or
        // reads again, and are copied at once.
        unsafe {
            self.check(sys::brs_lengths_file_lengths(&mut lengths, &mut count, raw))?;
            self.check(sys::brs_lengths_file_images(
                &mut patches,
                &mut offsets,
                raw,
            ))?;
            let offsets = std::slice::from_raw_parts(offsets, count + 1).to_vec();
            let images = offsets[count] as usize;
            Ok(LengthsFile {
                lengths: std::slice::from_raw_parts(lengths, count).to_vec(),
                patches: std::slice::from_raw_parts(patches, images).to_vec(),
                offsets,
            })
        }
    }
}

impl Drop for LengthsReader {
    fn drop(&mut self) {
        // SAFETY: the handle is ours.
        unsafe { sys::brs_lengths_file_free(self.0.as_ptr()) }
    }
}

impl LengthsFile {
    /// Reads the lengths file at `path`; messages name the path as given.
    pub fn read(path: impl AsRef<Path>) -> Result<LengthsFile> {
        let path = path.as_ref();
        let name = path.to_string_lossy();
        let file = std::fs::File::open(path)
            .map_err(|e| unreadable(&format!("cannot open lengths file '{name}'"), e))?;
        LengthsFile::from_reader(file, &name)
    }

    /// Reads a stream to its end in chunks (memory bounded by the values; a
    /// wrong stream stops at its first bad line); `name` names it in messages
    /// ("standard input").
    pub fn from_reader(mut stream: impl Read, name: &str) -> Result<LengthsFile> {
        let reader = LengthsReader::new()?;
        let c_name = c_name(name)?;
        // SAFETY: the handle is live; the name is copied.
        reader.check(unsafe { sys::brs_lengths_file_begin(reader.0.as_ptr(), c_name.as_ptr()) })?;
        let mut chunk = vec![0u8; CHUNK_SIZE];
        loop {
            let got = match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(got) => got,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(unreadable(&format!("cannot read {name}"), e)),
            };
            if reader.feed(&chunk[..got]) != sys::BRS_OK {
                break; // finish reports the first problem
            }
        }
        // SAFETY: the handle is live.
        reader.check(unsafe { sys::brs_lengths_file_finish(reader.0.as_ptr()) })?;
        reader.take()
    }

    /// Reads a whole file held in memory, named `name` in messages.
    pub fn parse(bytes: &[u8], name: &str) -> Result<LengthsFile> {
        let reader = LengthsReader::new()?;
        let c_name = c_name(name)?;
        // SAFETY: the handle is live; bytes and name are read during the call.
        reader.check(unsafe {
            sys::brs_lengths_file_parse(
                reader.0.as_ptr(),
                bytes.as_ptr().cast::<c_char>(),
                bytes.len(),
                c_name.as_ptr(),
            )
        })?;
        reader.take()
    }

    /// The token count of each sample, line by line.
    pub fn lengths(&self) -> &[u32] {
        &self.lengths
    }

    /// The encoder loads (patch counts) of sample `sample`'s images, in the
    /// order of its line; empty for a sample without images. Panics when
    /// `sample` is not below `lengths().len()`.
    pub fn images(&self, sample: usize) -> &[u32] {
        let (start, end) = (self.offsets[sample], self.offsets[sample + 1]);
        &self.patches[start as usize..end as usize]
    }

    /// Whether any sample has an image.
    pub fn has_images(&self) -> bool {
        !self.patches.is_empty()
    }

    /// Every image's load, sample after sample; sample i's are
    /// `patches()[offsets()[i] .. offsets()[i + 1]]`.
    pub fn patches(&self) -> &[u32] {
        &self.patches
    }

    /// `lengths().len() + 1` offsets into `patches()`, from 0.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }
}

/// A cost-model file as checked by libbrs: its values by key.
///
/// ```no_run
/// let model = brs::CostModelFile::read("cost.json")?;
/// let sampler = brs::Sampler::builder()
///     .alpha(model.alpha())
///     .intercept(model.intercept())
///     .max_tokens(model.max_tokens())
///     .build(&[512, 730, 96])?;
/// # Ok::<(), brs::Error>(())
/// ```
pub struct CostModelFile {
    raw: NonNull<sys::brs_cost_model_file>,
}

// SAFETY: the handle is a heap object owned by this value; its read-only
// calls may run on any thread.
unsafe impl Send for CostModelFile {}

impl CostModelFile {
    /// Reads the cost-model file at `path`; messages name the path as given.
    pub fn read(path: impl AsRef<Path>) -> Result<CostModelFile> {
        let path = path.as_ref();
        let name = path.to_string_lossy();
        let file = std::fs::File::open(path)
            .map_err(|e| unreadable(&format!("{name}: cannot open it"), e))?;
        let mut bytes = Vec::new();
        // One byte more than the library takes: it refuses a larger file.
        file.take(sys::BRS_COST_MODEL_FILE_MAX_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| unreadable(&format!("{name}: cannot read it"), e))?;
        CostModelFile::parse(&bytes, &name)
    }

    /// Checks a file's bytes, named `name` in messages.
    pub fn parse(bytes: &[u8], name: &str) -> Result<CostModelFile> {
        let mut raw = null_mut();
        // SAFETY: an out-parameter for a new handle.
        check(
            unsafe { sys::brs_cost_model_file_new(&mut raw) },
            String::new,
        )?;
        let raw = NonNull::new(raw).ok_or_else(|| Error::new(ErrorCode::NoMemory, ""))?;
        let file = CostModelFile { raw };
        let c_name = c_name(name)?;
        // SAFETY: the handle is live; bytes are copied, the name read during the call.
        file.check(unsafe {
            sys::brs_cost_model_file_parse(
                raw.as_ptr(),
                bytes.as_ptr().cast::<c_char>(),
                bytes.len(),
                c_name.as_ptr(),
            )
        })?;
        Ok(file)
    }

    fn check(&self, status: i32) -> Result<()> {
        // SAFETY: the handle is live; the message is copied at once.
        check(status, || unsafe {
            owned(sys::brs_cost_model_file_last_error(self.raw.as_ptr()))
        })
    }

    fn key(key: &str) -> Result<CString> {
        CString::new(key).map_err(|_| Error::new(ErrorCode::Unsupported, "a key holds a NUL byte"))
    }

    /// Whether `key` holds a value (absent and null mean the same).
    pub fn has(&self, key: &str) -> Result<bool> {
        let (key, mut present) = (CostModelFile::key(key)?, 0i32);
        // SAFETY: the handle is live; an out-parameter.
        self.check(unsafe {
            sys::brs_cost_model_file_has(&mut present, self.raw.as_ptr(), key.as_ptr())
        })?;
        Ok(present != 0)
    }

    /// A number key's value ("alpha", "seconds_per_unit", "r2", ...), None
    /// when absent or null.
    pub fn double(&self, key: &str) -> Result<Option<f64>> {
        if !self.has(key)? {
            return Ok(None);
        }
        let (c_key, mut value) = (CostModelFile::key(key)?, 0f64);
        // SAFETY: the handle is live; an out-parameter.
        self.check(unsafe {
            sys::brs_cost_model_file_get_double(&mut value, self.raw.as_ptr(), c_key.as_ptr())
        })?;
        Ok(Some(value))
    }

    /// An integer key's value ("max_tokens", "version"), None when absent or null.
    pub fn int(&self, key: &str) -> Result<Option<i64>> {
        if !self.has(key)? {
            return Ok(None);
        }
        let (c_key, mut value) = (CostModelFile::key(key)?, 0i64);
        // SAFETY: the handle is live; an out-parameter.
        self.check(unsafe {
            sys::brs_cost_model_file_get_int(&mut value, self.raw.as_ptr(), c_key.as_ptr())
        })?;
        Ok(Some(value))
    }

    /// Any key's value as the file writes it, in JSON ("\"calibrated\"", an
    /// object, an array), None when absent or null.
    pub fn json(&self, key: &str) -> Result<Option<String>> {
        if !self.has(key)? {
            return Ok(None);
        }
        let c_key = CostModelFile::key(key)?;
        let (mut text, mut length) = (null(), 0usize);
        // SAFETY: out-parameters; the text lives as long as the handle and is
        // copied at once.
        unsafe {
            self.check(sys::brs_cost_model_file_get_json(
                &mut text,
                &mut length,
                self.raw.as_ptr(),
                c_key.as_ptr(),
            ))?;
            let bytes = std::slice::from_raw_parts(text.cast::<u8>(), length);
            Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
        }
    }

    /// The quadratic (attention) term of the cost.
    pub fn alpha(&self) -> f64 {
        self.double("alpha").ok().flatten().unwrap_or(0.0)
    }

    /// The fixed cost of one micro-batch.
    pub fn intercept(&self) -> f64 {
        self.double("intercept").ok().flatten().unwrap_or(0.0)
    }

    /// The cap on padded tokens per micro-batch, None for no cap.
    pub fn max_tokens(&self) -> Option<u64> {
        self.int("max_tokens").ok().flatten().map(|cap| cap as u64)
    }

    /// The seconds of one cost unit, None for a model that was not calibrated.
    pub fn seconds_per_unit(&self) -> Option<f64> {
        self.double("seconds_per_unit").ok().flatten()
    }

    /// What the first run of a new batch shape costs beyond a warm run, None
    /// when not measured.
    pub fn first_shape_seconds(&self) -> Option<f64> {
        self.double("first_shape_seconds").ok().flatten()
    }
}

impl Drop for CostModelFile {
    fn drop(&mut self) {
        // SAFETY: the handle is ours.
        unsafe { sys::brs_cost_model_file_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for CostModelFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CostModelFile")
            .field("alpha", &self.alpha())
            .field("intercept", &self.intercept())
            .field("max_tokens", &self.max_tokens())
            .finish()
    }
}
