//! Bearer-token authentication. The tokens file holds one line per token:
//! `<sha256 of the token, hex> <user> <role> [<permissions>]` (`role` is `user` or `admin`;
//! `permissions`, optional, a comma-separated list: `import` lets the token submit jobs by
//! reference to files under the server's import roots; `#` starts a comment). Tokens
//! themselves are never stored: `egsolve token add NAME [--admin] [--import]` prints a new
//! one once and appends its hash. With auth off (loopback only) every caller is the admin
//! `local`, who may import.
//!
//! This module knows nothing about HTTP beyond the header value it is given.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// What a caller may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Sees and cancels own jobs.
    User,
    /// Sees and cancels every job.
    Admin,
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// User name (jobs are owned by it).
    pub user: String,
    /// Role.
    pub role: Role,
    /// Whether the caller may submit jobs by reference (the `import` permission).
    pub may_import: bool,
}

impl Caller {
    /// Whether the caller may see or cancel a job owned by `owner`.
    pub fn may_access(&self, owner: &str) -> bool {
        self.role == Role::Admin || self.user == owner
    }

    /// Whose jobs a listing shows: `None` for everyone's.
    pub fn listing_scope(&self) -> Option<&str> {
        match self.role {
            Role::Admin => None,
            Role::User => Some(&self.user),
        }
    }
}

/// Tokens-file problems.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The file could not be read or written.
    #[error("tokens file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A line is not `HASH USER ROLE`.
    #[error(
        "tokens file {path}, line {line}: expected '<sha256-hex> <user> <user|admin> [import]'"
    )]
    Syntax { path: PathBuf, line: usize },
    /// The user name cannot be stored.
    #[error("user names are 1-64 characters of letters, digits, '-', '_', '.' or '@'")]
    BadName,
}

/// Who is calling: the result of checking an `Authorization` header.
#[derive(Debug, Clone)]
pub enum Authenticator {
    /// Auth off: everyone is the admin `local`.
    Off,
    /// Token hash → caller.
    Tokens(HashMap<String, Caller>),
}

impl Authenticator {
    /// Loads the tokens file.
    pub fn from_file(path: &Path) -> Result<Authenticator, AuthError> {
        let text = std::fs::read_to_string(path).map_err(|source| AuthError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut tokens = HashMap::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let syntax = || AuthError::Syntax {
                path: path.to_owned(),
                line: index + 1,
            };
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (hash, user, role, permissions) = match fields[..] {
                [hash, user, role] => (hash, user, role, ""),
                [hash, user, role, permissions] => (hash, user, role, permissions),
                _ => return Err(syntax()),
            };
            let mut may_import = false;
            for permission in permissions.split(',').filter(|p| !p.is_empty()) {
                match permission {
                    "import" => may_import = true,
                    _ => return Err(syntax()),
                }
            }
            let role = match role {
                "user" => Role::User,
                "admin" => Role::Admin,
                _ => return Err(syntax()),
            };
            if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(syntax());
            }
            tokens.insert(
                hash.to_ascii_lowercase(),
                Caller {
                    user: user.to_string(),
                    role,
                    may_import,
                },
            );
        }
        Ok(Authenticator::Tokens(tokens))
    }

    /// The caller for an `Authorization` header value, or `None` if it is missing or wrong.
    pub fn authenticate(&self, header: Option<&str>) -> Option<Caller> {
        match self {
            Authenticator::Off => Some(Caller {
                user: "local".into(),
                role: Role::Admin,
                may_import: true,
            }),
            Authenticator::Tokens(tokens) => {
                let token = header?.strip_prefix("Bearer ")?.trim();
                tokens.get(&hash_token(token)).cloned()
            }
        }
    }
}

/// SHA-256 of a token, hex.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Makes a new token for `user` (an admin's with `admin`), appends its hash to `path`
/// (created if missing, mode 0600 on Unix) and returns the token, which is shown once and
/// stored nowhere.
pub fn add_token(path: &Path, user: &str, admin: bool) -> Result<String, AuthError> {
    add_token_with(path, user, admin, false)
}

/// As [`add_token`]; with `import`, the token may submit jobs by reference.
pub fn add_token_with(
    path: &Path,
    user: &str,
    admin: bool,
    import: bool,
) -> Result<String, AuthError> {
    let valid = !user.is_empty()
        && user.len() <= 64
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c));
    if !valid {
        return Err(AuthError::BadName);
    }
    let token = format!("egs_{}", hex::encode(rand::random::<[u8; 32]>()));
    let role = if admin { "admin" } else { "user" };
    let io = |source| AuthError::Io {
        path: path.to_owned(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(io)?;
    let permissions = if import { " import" } else { "" };
    writeln!(file, "{} {user} {role}{permissions}", hash_token(&token)).map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_tokens_authenticate_their_user_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        let alice = add_token(&path, "alice", false).unwrap();
        let root = add_token(&path, "root", true).unwrap();
        let importer = add_token_with(&path, "bob", false, true).unwrap();
        let auth = Authenticator::from_file(&path).unwrap();
        let who = |t: &str| auth.authenticate(Some(&format!("Bearer {t}")));
        assert_eq!(
            who(&alice),
            Some(Caller {
                user: "alice".into(),
                role: Role::User,
                may_import: false,
            })
        );
        assert_eq!(who(&root).unwrap().role, Role::Admin);
        assert!(
            !who(&root).unwrap().may_import,
            "admins need the permission too"
        );
        assert!(who(&importer).unwrap().may_import);
        assert_eq!(who("egs_wrong"), None);
        assert_eq!(auth.authenticate(None), None);
        assert!(!std::fs::read_to_string(&path).unwrap().contains(&alice));
        assert!(add_token(&path, "bad name", false).is_err());
        std::fs::write(&path, format!("{} eve user export\n", "0".repeat(64))).unwrap();
        assert!(
            Authenticator::from_file(&path).is_err(),
            "unknown permissions are refused"
        );
    }
}
