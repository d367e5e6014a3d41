//! A small JSON reader for the golden vectors (no crates are reachable).
//! Numbers keep their text so that integers stay exact and doubles parse
//! with Rust's correctly rounded conversion.

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn parse(text: &str) -> Result<Json, String> {
        let mut parser = Parser {
            bytes: text.as_bytes(),
            at: 0,
        };
        let value = parser.value()?;
        parser.skip_space();
        if parser.at != parser.bytes.len() {
            return Err(parser.error("text after the value"));
        }
        Ok(value)
    }

    /// The member `key` of an object, if it has one.
    pub fn find(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value),
            _ => None,
        }
    }

    /// The member `key` of an object; panics naming it if absent.
    pub fn get(&self, key: &str) -> &Json {
        match self {
            Json::Object(members) => members
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value)
                .unwrap_or_else(|| panic!("no member {key:?}")),
            other => panic!("{key:?} looked up in a non-object {other:?}"),
        }
    }

    pub fn as_u64(&self) -> u64 {
        match self {
            Json::Number(text) => text
                .parse()
                .unwrap_or_else(|_| panic!("{text} is not a u64")),
            other => panic!("{other:?} is not a number"),
        }
    }

    pub fn as_f64(&self) -> f64 {
        match self {
            Json::Number(text) => text
                .parse()
                .unwrap_or_else(|_| panic!("{text} is not a f64")),
            other => panic!("{other:?} is not a number"),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Json::String(text) => text,
            other => panic!("{other:?} is not a string"),
        }
    }

    pub fn as_array(&self) -> &[Json] {
        match self {
            Json::Array(items) => items,
            other => panic!("{other:?} is not an array"),
        }
    }
}

struct Parser<'t> {
    bytes: &'t [u8],
    at: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        format!("JSON: {what} at byte {}", self.at)
    }

    fn skip_space(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() != Some(byte) {
            return Err(self.error(&format!("expected {:?}", byte as char)));
        }
        self.at += 1;
        Ok(())
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if !self.bytes[self.at..].starts_with(word.as_bytes()) {
            return Err(self.error("unknown literal"));
        }
        self.at += word.len();
        Ok(value)
    }

    fn value(&mut self) -> Result<Json, String> {
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => Ok(self.number()),
            _ => Err(self.error("expected a value")),
        }
    }

    /// Items separated by commas up to `close`, each read by `item`.
    fn sequence<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        let mut items = Vec::new();
        self.at += 1; // the opening bracket
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(byte) if byte == close => {
                    self.at += 1;
                    return Ok(items);
                }
                _ => return Err(self.error("expected ',' or a closing bracket")),
            }
        }
    }

    fn array(&mut self) -> Result<Json, String> {
        Ok(Json::Array(self.sequence(b']', Self::value)?))
    }

    fn object(&mut self) -> Result<Json, String> {
        let members = self.sequence(b'}', |parser| {
            if parser.peek() != Some(b'"') {
                return Err(parser.error("expected a member name"));
            }
            let name = parser.string()?;
            parser.expect(b':')?;
            Ok((name, parser.value()?))
        })?;
        Ok(Json::Object(members))
    }

    fn number(&mut self) -> Json {
        let start = self.at;
        while matches!(
            self.bytes.get(self.at),
            Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        ) {
            self.at += 1;
        }
        Json::Number(String::from_utf8_lossy(&self.bytes[start..self.at]).into_owned())
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // the opening quote
        let mut text = Vec::new();
        loop {
            let byte = *self
                .bytes
                .get(self.at)
                .ok_or_else(|| self.error("unterminated string"))?;
            self.at += 1;
            match byte {
                b'"' => return String::from_utf8(text).map_err(|_| self.error("invalid UTF-8")),
                b'\\' => self.escape(&mut text)?,
                _ => text.push(byte),
            }
        }
    }

    fn escape(&mut self, text: &mut Vec<u8>) -> Result<(), String> {
        let byte = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| self.error("unterminated escape"))?;
        self.at += 1;
        let decoded = match byte {
            b'"' | b'\\' | b'/' => byte as char,
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode()?,
            _ => return Err(self.error("unknown escape")),
        };
        text.extend_from_slice(decoded.encode_utf8(&mut [0; 4]).as_bytes());
        Ok(())
    }

    /// \uXXXX, with a surrogate pair as two escapes.
    fn unicode(&mut self) -> Result<char, String> {
        let high = self.hex4()?;
        if !(0xD800..0xDC00).contains(&high) {
            return char::from_u32(high).ok_or_else(|| self.error("invalid code point"));
        }
        if !self.bytes[self.at..].starts_with(b"\\u") {
            return Err(self.error("lone surrogate"));
        }
        self.at += 2;
        let low = self.hex4()?;
        if !(0xDC00..0xE000).contains(&low) {
            return Err(self.error("invalid surrogate pair"));
        }
        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        char::from_u32(code).ok_or_else(|| self.error("invalid code point"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("short \\u"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("bad \\u"))?;
        self.at += 4;
        u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\u digits"))
    }
}
