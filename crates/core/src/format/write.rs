//! Writing arenas as EGSolver text (`.mpg`): `MAXID;` then one
//! `ID MAX|MIN SUCC:WEIGHT,... ["NAME"];` line per vertex in id order. The output reads back
//! through [`super::read`] to the same [`Arena`] (names included, except that control
//! characters in names become spaces).

use std::io::{self, Write};

use crate::arena::{Arena, Player};

/// Flush the line buffer to `out` once it holds this much.
const FLUSH_AT: usize = 1 << 16;

/// Writes `arena` in the EGSolver `.mpg` format.
pub fn write_mpg(arena: &Arena, mut out: impl Write) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(FLUSH_AT + 4096);
    push_u64(&mut buf, arena.vertex_count() as u64 - 1);
    buf.extend_from_slice(b";\n");
    for v in 0..arena.vertex_count() as u32 {
        push_u64(&mut buf, u64::from(v));
        buf.extend_from_slice(match arena.owner(v) {
            Player::Zero => b" MAX ",
            Player::One => b" MIN ",
        });
        for (k, (target, weight)) in arena.successors(v).enumerate() {
            if k > 0 {
                buf.push(b',');
            }
            push_u64(&mut buf, u64::from(target));
            buf.push(b':');
            push_i64(&mut buf, weight);
        }
        if let Some(name) = arena.name(v) {
            push_quoted(&mut buf, name);
        }
        buf.extend_from_slice(b";\n");
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()
}

/// ` "name"` with `"` and `\` escaped and control characters replaced by spaces.
fn push_quoted(buf: &mut Vec<u8>, name: &str) {
    buf.extend_from_slice(b" \"");
    for &b in name.as_bytes() {
        match b {
            b'"' | b'\\' => buf.extend_from_slice(&[b'\\', b]),
            0..=0x1f | 0x7f => buf.push(b' '),
            _ => buf.push(b),
        }
    }
    buf.push(b'"');
}

/// Appends the decimal digits of `v`.
pub(crate) fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// Appends the decimal form of `v` (with `-` when negative).
pub(crate) fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_print_like_display() {
        for v in [0i64, 7, -1, 10, -10, 1234567890, i64::MAX, i64::MIN] {
            let mut buf = Vec::new();
            push_i64(&mut buf, v);
            assert_eq!(String::from_utf8(buf).unwrap(), v.to_string());
        }
    }
}
