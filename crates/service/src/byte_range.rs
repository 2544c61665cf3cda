//! Byte ranges of a stored binary result (RFC 9110 §14): `GET …/result?format=binary` with
//! `Range: bytes=A-B` (or `A-`, or `-N` for the last N) answers `206 Partial Content` with
//! those bytes and `Content-Range`, so a dropped download resumes where it stopped, and a
//! client can fetch one array of a large result (the credits at `32..32+8n`).
//!
//! - The full answer says `Accept-Ranges: bytes` and carries an `ETag` (the result's
//!   content key: a result never changes once stored); `If-Range` with another tag gets
//!   the whole body, as the RFC asks.
//! - One range per request: a list (`bytes=0-9,20-29`), another unit or a malformed value
//!   is ignored (the whole body, `200`), which the RFC allows; a range that starts past the
//!   end answers `416` with `Content-Range: bytes */LENGTH`.
//! - Partial answers are never compressed (the route's compression layer leaves a
//!   response with `Content-Range` alone), so offsets are offsets in the file.
//!
//! Written here rather than taken from a crate: the registry this build uses offline has
//! no range parser (`headers`, `http-range-header`), and one range of a byte array is a
//! few lines.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

/// What a `Range` header asks of a body of known length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// The whole body (no header, or one that is ignored).
    Whole,
    /// Bytes `first..=last`, within the body.
    Part { first: u64, last: u64 },
    /// A range that starts past the end.
    Unsatisfiable,
}

/// Reads a `Range` header value for a body of `length` bytes.
pub(crate) fn wanted(value: &str, length: u64) -> Wanted {
    let Some((unit, spec)) = value.trim().split_once('=') else {
        return Wanted::Whole;
    };
    if !unit.trim().eq_ignore_ascii_case("bytes") || spec.contains(',') {
        return Wanted::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Wanted::Whole;
    };
    // Each side: empty (`None`), a number, or malformed (then the header is ignored).
    let side = |s: &str| -> Result<Option<u64>, ()> {
        let s = s.trim();
        match s.is_empty() {
            true => Ok(None),
            false if s.bytes().all(|b| b.is_ascii_digit()) => s.parse().map(Some).map_err(|_| ()),
            false => Err(()),
        }
    };
    let (Ok(first), Ok(last)) = (side(first), side(last)) else {
        return Wanted::Whole;
    };
    match (first, last) {
        // `-N`: the last N bytes.
        (None, Some(suffix)) if suffix == 0 || length == 0 => Wanted::Unsatisfiable,
        (None, Some(suffix)) => Wanted::Part {
            first: length.saturating_sub(suffix),
            last: length - 1,
        },
        (Some(first), _) if first >= length => Wanted::Unsatisfiable,
        (Some(first), Some(last)) if last < first => Wanted::Whole,
        // `A-B`, or `A-` to the end.
        (Some(first), last) => Wanted::Part {
            first,
            last: last.map_or(length - 1, |last| last.min(length - 1)),
        },
        (None, None) => Wanted::Whole,
    }
}

/// The answer to a `GET` of `body` (a stored result) under `request`'s `Range` and
/// `If-Range`: the whole body, a part of it, or `416`. `tag` is the body's entity tag,
/// quoted.
pub(crate) fn respond(
    body: Bytes,
    request: &HeaderMap,
    tag: &str,
    content_type: &'static str,
) -> Response {
    let length = body.len() as u64;
    let same_entity = request
        .get(header::IF_RANGE)
        .is_none_or(|value| value.as_bytes() == tag.as_bytes());
    let asked = request
        .get(header::RANGE)
        .and_then(|value| value.to_str().ok())
        .filter(|_| same_entity)
        .map_or(Wanted::Whole, |value| wanted(value, length));
    let (status, body, content_range) = match asked {
        Wanted::Whole => (StatusCode::OK, body, None),
        Wanted::Part { first, last } => (
            StatusCode::PARTIAL_CONTENT,
            body.slice(first as usize..=last as usize),
            Some(format!("bytes {first}-{last}/{length}")),
        ),
        Wanted::Unsatisfiable => (
            StatusCode::RANGE_NOT_SATISFIABLE,
            Bytes::new(),
            Some(format!("bytes */{length}")),
        ),
    };
    let mut response = (status, Body::from(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Ok(tag) = HeaderValue::from_str(tag) {
        headers.insert(header::ETAG, tag);
    }
    if let Some(range) = content_range.and_then(|r| HeaderValue::from_str(&r).ok()) {
        headers.insert(header::CONTENT_RANGE, range);
    }
    if status != StatusCode::RANGE_NOT_SATISFIABLE {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::{Wanted, wanted};

    #[test]
    fn reads_one_range_and_ignores_what_it_cannot_serve() {
        let part = |first, last| Wanted::Part { first, last };
        assert_eq!(wanted("bytes=0-9", 100), part(0, 9));
        assert_eq!(wanted("bytes=90-", 100), part(90, 99));
        assert_eq!(wanted("bytes=90-500", 100), part(90, 99));
        assert_eq!(wanted("bytes=-10", 100), part(90, 99));
        assert_eq!(wanted("bytes=-500", 100), part(0, 99));
        assert_eq!(wanted(" Bytes = 5 - 6 ", 100), part(5, 6));
        assert_eq!(wanted("bytes=100-", 100), Wanted::Unsatisfiable);
        assert_eq!(wanted("bytes=-0", 100), Wanted::Unsatisfiable);
        for ignored in [
            "bytes=0-9,20-29",
            "items=0-9",
            "bytes=9-0",
            "bytes=a-b",
            "bytes=-",
            "bytes=5",
            "0-9",
            "bytes=+1-2",
        ] {
            assert_eq!(wanted(ignored, 100), Wanted::Whole, "{ignored}");
        }
    }
}
