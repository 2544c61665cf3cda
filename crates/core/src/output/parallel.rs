//! Formatting records on every core and writing them in order: the records are cut into
//! pieces of [`PIECE`] vertices, a wave of pieces (four per thread) is formatted in
//! parallel on the current rayon pool, then the calling thread writes the wave's pieces in
//! order, so the output is byte for byte what one sequential pass writes. Writing is a copy
//! into the page cache or a socket buffer, formatting the work, so the waves do not
//! overlap them. Small outputs (one piece) are formatted on the calling thread alone.

use std::io;

use super::records::RecordBuffer;
use crate::solve::chunked;

/// Records per piece (one task; about 0.3–1 MB of text).
pub const PIECE: usize = 1 << 15;

/// Formats records `0..count` (`record(buffer, i)` appends record `i`) and hands the bytes
/// to `sink` in order, in pieces. `opening` says whether record 0 is the document's first
/// (no JSON separator before it). One wave of pieces is in memory at a time; an error from
/// `sink` stops the formatting and is returned.
pub fn format_in_order(
    count: usize,
    opening: bool,
    record: impl Fn(&mut RecordBuffer, usize) + Sync,
    mut sink: impl FnMut(Vec<u8>) -> io::Result<()>,
) -> io::Result<()> {
    let piece = |first: usize, end: usize| {
        let mut buffer = if opening && first == 0 {
            RecordBuffer::default()
        } else {
            RecordBuffer::continuing()
        };
        for i in first..end {
            record(&mut buffer, i);
        }
        buffer.take()
    };
    if count <= PIECE {
        return sink(piece(0, count));
    }
    let wave = PIECE * 4 * rayon::current_num_threads();
    for start in (0..count).step_by(wave) {
        let end = (start + wave).min(count);
        let pieces: Vec<Vec<u8>> = chunked::values_of_chunks(end - start, PIECE, |_, range| {
            piece(start + range.start, start + range.end)
        });
        for bytes in pieces {
            sink(bytes)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::records::StrategyField;

    fn sequential(count: usize) -> Vec<u8> {
        let mut buffer = RecordBuffer::default();
        for i in 0..count {
            buffer.json_vertex(i as u32, i as u64, 7, StrategyField::Included);
        }
        buffer.take()
    }

    #[test]
    fn pieces_join_to_the_sequential_bytes() {
        for count in [0, 1, PIECE, PIECE + 1, 5 * PIECE + 17] {
            let mut out = Vec::new();
            format_in_order(
                count,
                true,
                |buffer, i| buffer.json_vertex(i as u32, i as u64, 7, StrategyField::Included),
                |bytes| {
                    out.extend_from_slice(&bytes);
                    Ok(())
                },
            )
            .unwrap();
            assert!(out == sequential(count), "{count} records differ");
        }
    }

    #[test]
    fn a_sink_error_stops_the_writing() {
        let mut calls = 0;
        let result = format_in_order(
            40 * PIECE,
            true,
            |buffer, i| buffer.text_line(i as u32, 1, 0, StrategyField::Omitted),
            |_| {
                calls += 1;
                Err(io::Error::other("disk full"))
            },
        );
        assert_eq!(result.unwrap_err().to_string(), "disk full");
        assert_eq!(calls, 1);
    }
}
