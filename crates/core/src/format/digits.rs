//! Decimal numbers read eight bytes at a time (SWAR: SIMD within a register), for the
//! tokenizer's fast paths ([`super::cursor`]) and the record fast paths of the text
//! readers ([`super::fast`]).
//!
//! A byte loop over digits costs a branch per digit and mispredicts where every number
//! ends, once or twice per number of a game file (ids of 1 to 9 digits, weights of 1 or 2).
//! Here a number of up to 16 digits is read with one or two unaligned 8-byte loads: a mask
//! finds the first byte that is not a digit (no branch per digit), and three multiplies
//! fold the digits into the value. Callers make sure that 16 bytes can be read at the
//! position (the slow, exact paths handle the last bytes of a text), so no load here is
//! bounds-checked byte by byte.

/// Every byte's high bit.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// Every byte's low seven bits.
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
/// `b` in every byte.
const fn splat(b: u8) -> u64 {
    0x0101_0101_0101_0101 * b as u64
}

/// Bytes that must be readable at a position for [`number`] to read there.
pub(crate) const WINDOW: usize = 16;

/// The 8 bytes of `text` at `pos`, the first in the lowest byte. The caller has checked
/// that `pos + 8 <= text.len()` (the one check here is then folded away or predicted).
#[inline(always)]
pub(crate) fn word(text: &[u8], pos: usize) -> u64 {
    match text.get(pos..pos + 8) {
        Some(bytes) => u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])),
        None => 0,
    }
}

/// How many of the first bytes of `word` are ASCII digits (0 to 8).
#[inline(always)]
pub(crate) fn digit_count(word: u64) -> usize {
    // Per byte, with the high bit forced on or off so that no byte borrows or carries
    // into the next: the high bit of `at_least_0` says `b & 0x7f >= '0'`, that of
    // `above_9` says `b & 0x7f > '9'`; bytes of 0x80 and up are never digits.
    let low = word & LOW7;
    let at_least_0 = (low | HIGH).wrapping_sub(splat(b'0')) & HIGH;
    let above_9 = low.wrapping_add(splat(0x7f - b'9')) & HIGH;
    let not_digit = (at_least_0 ^ HIGH) | above_9 | (word & HIGH);
    (not_digit.trailing_zeros() / 8) as usize
}

/// The value of the first `count` bytes of `word`, which are digits (1 <= `count` <= 8).
#[inline(always)]
pub(crate) fn digits_value(word: u64, count: usize) -> u64 {
    debug_assert!((1..=8).contains(&count));
    // The digits moved to the top bytes: the bytes shifted in read as leading zeros.
    let v = (word & 0x0f0f_0f0f_0f0f_0f0f) << (8 * (8 - count) as u32);
    // Pairs, then quadruples, then the eight: the lower byte of each lane is the more
    // significant (the text's first digit is the word's lowest byte).
    // (The top lane's product may pass 64 bits; only the bottom lane is kept.)
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    (v.wrapping_mul(10_000).wrapping_add(v >> 32)) & 0xffff_ffff
}

/// Powers of ten up to 10^8.
const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The unsigned number at `pos` of `text`: its value and digit count, `None` when no
/// digit is there or the number has 16 digits or more (then the caller takes its exact,
/// byte-by-byte path). The caller has checked that `pos + WINDOW <= text.len()`, so the
/// byte after the number is inside `text`.
#[inline(always)]
pub(crate) fn number(text: &[u8], pos: usize) -> Option<(u64, usize)> {
    let first = word(text, pos);
    let count = digit_count(first);
    if count == 0 {
        return None;
    }
    if count < 8 {
        return Some((digits_value(first, count), count));
    }
    let second = word(text, pos + 8);
    let more = digit_count(second);
    let high = digits_value(first, 8);
    match more {
        0 => Some((high, 8)),
        8 => None,
        _ => Some((high * POW10[more] + digits_value(second, more), 8 + more)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn padded(text: &str) -> Vec<u8> {
        let mut bytes = text.as_bytes().to_vec();
        bytes.resize(bytes.len() + WINDOW, b' ');
        bytes
    }

    #[test]
    fn counts_and_values_match_a_byte_loop() {
        for text in [
            "0",
            "7",
            "42;",
            "123:",
            "9999999,",
            "12345678",
            "123456789",
            "4294967295",
            "000012",
            "999999999999999",
            "1234567890123456",
            "x1",
            "",
            ":3",
        ] {
            let bytes = padded(text);
            let digits = text.bytes().take_while(u8::is_ascii_digit).count();
            let expected = (1..16)
                .contains(&digits)
                .then(|| (text[..digits].parse::<u64>().unwrap(), digits));
            assert_eq!(number(&bytes, 0), expected, "{text:?}");
        }
    }

    #[test]
    fn every_byte_value_is_classified() {
        for b in 0..=255u8 {
            let word = u64::from_le_bytes([b'1', b, b'2', b'3', b'4', b'5', b'6', b'7']);
            let expected = if b.is_ascii_digit() { 8 } else { 1 };
            assert_eq!(digit_count(word), expected, "byte {b:#x}");
        }
    }
}
