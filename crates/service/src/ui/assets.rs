//! The page's files, embedded at compile time (`include_bytes!`: no build step, no CDN):
//! two HTML pages, one script, one style sheet and an icon. Each answer carries an `ETag`
//! (a revalidated copy costs a `304`), `Cache-Control: no-cache` (a new binary's page is
//! seen at once) and, for the pages, a content security policy that allows only this
//! server's own scripts, styles and API.

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::error::ApiError;

/// One embedded file.
struct Asset {
    /// Its name under `/ui/` (the pages have none).
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

const HTML: &str = "text/html; charset=utf-8";

/// The front page (index 0), the job page (1), then the files under `/ui/`.
const ASSETS: &[Asset] = &[
    Asset {
        name: "",
        content_type: HTML,
        bytes: include_bytes!("assets/index.html"),
    },
    Asset {
        name: "",
        content_type: HTML,
        bytes: include_bytes!("assets/job.html"),
    },
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("assets/app.js"),
    },
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("assets/style.css"),
    },
    Asset {
        name: "favicon.svg",
        content_type: "image/svg+xml",
        bytes: include_bytes!("assets/favicon.svg"),
    },
];

/// Scripts, styles and requests only to this server; no frames, no plug-ins.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'none'";

/// `GET /`: the front page.
pub async fn front_page(headers: HeaderMap) -> Response {
    serve(0, &headers)
}

/// `GET /jobs/{id}`: the job page (its script reads the id from the address).
pub async fn job_page(headers: HeaderMap) -> Response {
    serve(1, &headers)
}

/// `GET /ui/{asset}`: the script, the style sheet, the icon.
/// `/favicon.ico`: the icon, for browsers that ask there whatever the page's `<link>` says
/// (a 404 there is an error in the user's console).
pub async fn favicon(headers: HeaderMap) -> Result<Response, ApiError> {
    asset(Path("favicon.svg".to_string()), headers).await
}

pub async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Result<Response, ApiError> {
    let index = ASSETS
        .iter()
        .position(|a| !a.name.is_empty() && a.name == name)
        .ok_or(ApiError::RouteNotFound)?;
    Ok(serve(index, &headers))
}

/// Strong validators of every asset (SHA-256 prefix), computed once.
fn etag(index: usize) -> &'static str {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    &TAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| format!("\"{}\"", &hex::encode(Sha256::digest(a.bytes))[..20]))
            .collect()
    })[index]
}

fn serve(index: usize, request: &HeaderMap) -> Response {
    let asset = &ASSETS[index];
    let tag = etag(index);
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = asset.bytes.into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        response
    };
    let headers = response.headers_mut();
    headers.insert(header::ETAG, HeaderValue::from_str(tag).expect("ascii"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if asset.content_type == HTML {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(POLICY),
        );
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_the_pages_name_is_embedded() {
        for page in &ASSETS[..2] {
            let html = std::str::from_utf8(page.bytes).expect("utf-8");
            for asset in &ASSETS[2..] {
                assert!(
                    html.contains(&format!("ui/{}", asset.name)),
                    "{}",
                    asset.name
                );
            }
        }
    }

    #[test]
    fn etags_differ_per_asset() {
        let tags: std::collections::BTreeSet<_> = (0..ASSETS.len()).map(etag).collect();
        assert_eq!(tags.len(), ASSETS.len());
    }
}
