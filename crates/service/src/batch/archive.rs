//! The tar archives of batches: a request body read into its members ([`members`]), and
//! result entries written one at a time into a response stream ([`entry`], [`END`]).

use std::collections::HashSet;
use std::io::Read;
use std::path::Component;

use crate::error::ApiError;
use crate::upload::{self, Encoding};

/// A tar archive's end: two empty 512-byte blocks.
pub const END: [u8; 1024] = [0; 1024];

/// Reads the archive `body` (compressed as `encoding` says, or as its magic bytes say) and
/// hands each regular-file member to `each` as `(name, bytes)` as soon as it is read, in
/// archive order; directories and other entry kinds are skipped. `each` may refuse the
/// batch (its error ends the read). Refused, as a whole: a body that is not a tar archive,
/// no member, more than `max_members`, more than `max_bytes` in all, a name used twice, or a
/// name that is absolute or climbs out (`..`): results are written under these names.
pub fn read_members(
    body: impl Read,
    encoding: Encoding,
    max_members: u64,
    max_bytes: u64,
    mut each: impl FnMut(String, Vec<u8>) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let malformed = |what: String| ApiError::MalformedBatch(what);
    let unreadable = |e: std::io::Error| malformed(format!("the body could not be read: {e}"));
    let (encoding, body) = sniffed(body, encoding).map_err(unreadable)?;
    let decoded = upload::decoder(encoding, body)
        .map_err(|e| malformed(format!("the body could not be decompressed: {e}")))?;
    let mut archive = tar::Archive::new(decoded);
    let entries = archive
        .entries()
        .map_err(|e| malformed(format!("the body is not a tar archive: {e}")))?;
    let (mut names, mut total) = (HashSet::new(), 0u64);
    for (index, entry) in entries.enumerate() {
        let at = |e: std::io::Error| {
            malformed(format!(
                "the body is not a tar archive (entry {}): {e}",
                index + 1
            ))
        };
        let entry = entry.map_err(at)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(at)?.into_owned();
        let name = path
            .to_str()
            .ok_or_else(|| malformed(format!("entry {}: its name is not UTF-8", index + 1)))?
            .to_string();
        if !path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(malformed(format!(
                "entry '{name}': names must be relative and stay inside the archive (no '..', \
                 no leading '/')"
            )));
        }
        if names.len() as u64 >= max_members {
            return Err(malformed(format!(
                "more than {max_members} arenas (the server's max_batch_jobs): split the batch"
            )));
        }
        if !names.insert(name.clone()) {
            return Err(malformed(format!(
                "two entries are named '{name}': their results would share one name"
            )));
        }
        let mut bytes = Vec::with_capacity(entry.size().min(max_bytes) as usize);
        entry
            .take(max_bytes - total + 1)
            .read_to_end(&mut bytes)
            .map_err(at)?;
        total += bytes.len() as u64;
        if total > max_bytes {
            return Err(ApiError::Upload(upload::UploadError::TooLarge {
                limit: max_bytes,
            }));
        }
        each(name, bytes)?;
    }
    if names.is_empty() {
        return Err(malformed(
            "the archive holds no file: put one arena file per entry".into(),
        ));
    }
    Ok(())
}

/// `body`'s encoding (`encoding`, or what its first bytes say for `Sniff`), and the body
/// with those bytes still in front.
fn sniffed(mut body: impl Read, encoding: Encoding) -> std::io::Result<(Encoding, impl Read)> {
    // The longest magic `Encoding::sniff` knows (zstd's) is 4 bytes.
    let mut prefix = [0u8; 4];
    let mut filled = 0;
    if encoding == Encoding::Sniff {
        while filled < prefix.len() {
            match body.read(&mut prefix[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    let encoding = match encoding {
        Encoding::Sniff => Encoding::sniff(&prefix[..filled]),
        known => known,
    };
    Ok((
        encoding,
        std::io::Cursor::new(prefix).take(filled as u64).chain(body),
    ))
}

/// One archive entry: a header block for `name` with `data`'s size, the data, and the
/// padding to a whole block (names longer than 100 bytes take GNU's long-name entry).
pub fn entry(name: &str, data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut header = tar::Header::new_gnu();
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    let mtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    header.set_mtime(mtime);
    let mut builder = tar::Builder::new(Vec::with_capacity(data.len() + 1024));
    builder.append_data(&mut header, name, data)?;
    // Taken before `into_inner`, which would append the archive's end.
    Ok(std::mem::take(builder.get_mut()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The members of `raw`, read one byte at a time (as a slow connection would hand them).
    fn members(
        raw: &[u8],
        encoding: Encoding,
        max_members: u64,
        max_bytes: u64,
    ) -> Result<Vec<(String, Vec<u8>)>, ApiError> {
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(out.len()).min(1);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut members = Vec::new();
        read_members(
            Trickle(raw),
            encoding,
            max_members,
            max_bytes,
            |name, bytes| {
                members.push((name, bytes));
                Ok(())
            },
        )?;
        Ok(members)
    }

    fn archive(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, data) in files {
            out.extend(entry(name, data).unwrap());
        }
        out.extend(END);
        out
    }

    #[test]
    fn written_entries_read_back_in_order() {
        let long = "d/".repeat(80) + "game.pg";
        let raw = archive(&[("a.pg", b"parity 0;\n0 1 0 0;\n"), (&long, b"x")]);
        let members = members(&raw, Encoding::Sniff, 10, 1 << 20).unwrap();
        assert_eq!(members.len(), 2);
        assert_eq!(
            members[0],
            ("a.pg".to_string(), b"parity 0;\n0 1 0 0;\n".to_vec())
        );
        assert_eq!(members[1].0, long);
    }

    #[test]
    fn a_compressed_archive_is_read_through_its_magic_bytes() {
        let raw = archive(&[("a.pg", b"abc")]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &raw).unwrap();
        let members = members(&gz.finish().unwrap(), Encoding::Sniff, 10, 1 << 20).unwrap();
        assert_eq!(members, vec![("a.pg".to_string(), b"abc".to_vec())]);
    }

    #[test]
    fn bad_archives_are_refused_with_the_reason() {
        let refused = |raw: &[u8], max_members: u64, max_bytes: u64| {
            members(raw, Encoding::Sniff, max_members, max_bytes)
                .unwrap_err()
                .to_string()
        };
        assert!(refused(&archive(&[]), 10, 100).contains("no file"));
        let two = archive(&[("a", b"1"), ("a", b"2")]);
        assert!(refused(&two, 10, 100).contains("two entries are named 'a'"));
        let three = archive(&[("a", b"1"), ("b", b"2"), ("c", b"3")]);
        assert!(refused(&three, 2, 100).contains("more than 2 arenas"));
        assert!(refused(&three, 10, 2).contains("larger than the limit of 2"));
        // Written by hand: the tar crate refuses to write such a name.
        let mut header = tar::Header::new_old();
        header.as_old_mut().name[..4].copy_from_slice(b"../x");
        header.set_size(1);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        let mut climbing = header.as_bytes().to_vec();
        climbing.extend([b'1'; 512]);
        climbing.extend(END);
        assert!(refused(&climbing, 10, 100).contains("stay inside"));
        // Not an archive at all: text whose first block has no valid header checksum.
        let text = b"parity 1;\n".repeat(100);
        assert!(refused(&text, 10, 1 << 20).contains("not a tar archive"));
    }
}
