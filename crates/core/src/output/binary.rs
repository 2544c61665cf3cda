//! The binary result (`egsolve solve --output binary`, the service's
//! `GET /v1/jobs/{id}/result?format=binary`, media type `application/vnd.egsolve.result`):
//! a 32-byte header, then every vertex's credit, then every vertex's strategy, as
//! little-endian arrays a reader can map or hand to NumPy without parsing
//! (`docs/result-binary.md` is the specification).
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic, the ASCII bytes `EGSRESLT` |
//! | 8 | 4 | version, u32 LE: 1 |
//! | 12 | 4 | flags, u32 LE: bit 0 set when the credits were computed (see below); other bits 0 |
//! | 16 | 8 | `n`, the vertex count, u64 LE |
//! | 24 | 8 | reserved, 0 |
//! | 32 | 8·n | credits, u64 LE, vertex order; `u64::MAX` is ⊤ (player 1 wins) |
//! | 32 + 8·n | 4·n | strategies, u32 LE: the successor the vertex's owner picks where the owner wins, `u32::MAX` for no move |
//!
//! The file is exactly `32 + 12·n` bytes. Without bit 0 (a parity game answered by the parity
//! solver) the credits array holds only who wins: 0 for player 0's vertices, `u64::MAX` for
//! player 1's. The credits array starts 8-aligned and the strategies 4-aligned, so both can be
//! used in place from a mapped file.
//!
//! The service stores its results in this layout too, so serving the binary form is a copy.

use std::io::{self, Write};

use crate::solve::chunked;
use crate::solve::{NO_MOVE, Solution, TOP};

/// The first eight bytes.
pub const MAGIC: &[u8; 8] = b"EGSRESLT";
/// The layout's version.
pub const VERSION: u32 = 1;
/// Header bytes before the credits.
pub const HEADER_BYTES: u64 = 32;
/// Flag bit 0: the credits array holds least credits (else only winners).
pub const FLAG_CREDITS: u32 = 1;
/// The media type of the service's binary result.
pub const MEDIA_TYPE: &str = "application/vnd.egsolve.result";

/// What the header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Vertices.
    pub n: u64,
    /// Whether the credits were computed (flag bit 0).
    pub credits_computed: bool,
}

impl Header {
    /// The header of `solution`'s binary result.
    pub fn of(solution: &Solution) -> Header {
        Header {
            n: solution.credit.len() as u64,
            credits_computed: solution.credits_computed,
        }
    }

    /// The 32 header bytes.
    pub fn to_bytes(self) -> [u8; HEADER_BYTES as usize] {
        let mut bytes = [0u8; HEADER_BYTES as usize];
        bytes[..8].copy_from_slice(MAGIC);
        bytes[8..12].copy_from_slice(&VERSION.to_le_bytes());
        let flags = if self.credits_computed {
            FLAG_CREDITS
        } else {
            0
        };
        bytes[12..16].copy_from_slice(&flags.to_le_bytes());
        bytes[16..24].copy_from_slice(&self.n.to_le_bytes());
        bytes
    }

    /// Reads a header; an error says what is wrong.
    pub fn parse(bytes: &[u8]) -> Result<Header, String> {
        if bytes.len() < HEADER_BYTES as usize {
            return Err(format!(
                "{} bytes: a binary result has a {HEADER_BYTES}-byte header",
                bytes.len()
            ));
        }
        if &bytes[..8] != MAGIC {
            return Err("not a binary result (the magic EGSRESLT is missing)".into());
        }
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let version = word(8);
        if version != VERSION {
            return Err(format!(
                "binary result version {version}; this build reads {VERSION}"
            ));
        }
        let flags = word(12);
        if flags & !FLAG_CREDITS != 0 {
            return Err(format!("unknown flags {flags:#x} in a binary result"));
        }
        Ok(Header {
            n: u64::from_le_bytes(bytes[16..24].try_into().expect("8")),
            credits_computed: flags & FLAG_CREDITS != 0,
        })
    }

    /// Bytes of the whole result.
    pub fn total_bytes(self) -> u64 {
        HEADER_BYTES + 12 * self.n
    }

    /// Offset of the strategies array.
    pub fn strategies_offset(self) -> u64 {
        HEADER_BYTES + 8 * self.n
    }
}

/// Values per piece when the arrays are converted to bytes (a few MB each).
const PIECE: usize = 1 << 19;

/// Writes `solution` in the binary layout. The arrays are converted to little-endian bytes
/// in pieces on every core and written in order.
pub fn write_binary(out: &mut impl Write, solution: &Solution) -> io::Result<()> {
    out.write_all(&Header::of(solution).to_bytes())?;
    write_le(out, &solution.credit, u64::to_le_bytes)?;
    write_le(out, &solution.strategy, u32::to_le_bytes)
}

/// Threads of [`write_binary_at`]. A new tmpfs file of 3 GB (the answer of a 10^9-edge
/// game) took 1.82–1.90 s from one writer on the H200 host, 0.89–1.03 s from two at their own
/// offsets, and 0.94–1.21 s from four to sixteen: each page joins the file's page-cache index
/// under its lock, which two writers keep busy (`scripts/tmpfs-write.sh`).
const FILE_WRITERS: usize = 2;
/// Bytes a writer of [`write_binary_at`] takes at a time.
const FILE_PART: usize = 32 << 20;

/// Writes `solution` in the binary layout through `write_at` (writes `bytes` at `offset` of
/// a new, empty file: `FileExt::write_all_at`): the bytes of [`write_binary`], in parts from
/// [`FILE_WRITERS`] threads on a little-endian machine (the arrays' own bytes), else in
/// order on this thread. The caller owns the file (the core names none).
pub fn write_binary_at<F>(write_at: F, solution: &Solution) -> io::Result<()>
where
    F: Fn(&[u8], u64) -> io::Result<()> + Sync,
{
    write_binary_at_with(write_at, solution, FILE_WRITERS)
}

/// [`write_binary_at`] from `writers` threads: for a file whose space was given ahead
/// (`fallocate`), where each write only copies into existing pages and more writers help.
pub fn write_binary_at_with<F>(write_at: F, solution: &Solution, writers: usize) -> io::Result<()>
where
    F: Fn(&[u8], u64) -> io::Result<()> + Sync,
{
    write_in_parts(&write_at, solution, FILE_PART, writers.max(1))
}

fn write_in_parts<F>(
    write_at: &F,
    solution: &Solution,
    part_bytes: usize,
    writers: usize,
) -> io::Result<()>
where
    F: Fn(&[u8], u64) -> io::Result<()> + Sync,
{
    if cfg!(target_endian = "big") {
        let mut out = io::BufWriter::with_capacity(
            1 << 20,
            AtOffsets {
                write_at,
                offset: 0,
            },
        );
        write_binary(&mut out, solution)?;
        return out.flush();
    }
    use std::sync::{Mutex, PoisonError};
    let header = Header::of(solution).to_bytes();
    let mut parts = vec![(0, &header[..])];
    let mut offset = HEADER_BYTES;
    let credits: &[u8] = bytemuck::cast_slice(&solution.credit);
    let strategies: &[u8] = bytemuck::cast_slice(&solution.strategy);
    for part in credits
        .chunks(part_bytes)
        .chain(strategies.chunks(part_bytes))
    {
        parts.push((offset, part));
        offset += part.len() as u64;
    }
    let parts = Mutex::new(parts.into_iter());
    let first_error = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..writers {
            scope.spawn(|| {
                loop {
                    let next = parts.lock().unwrap_or_else(PoisonError::into_inner).next();
                    let Some((offset, bytes)) = next else { return };
                    if let Err(e) = write_at(bytes, offset) {
                        let mut first = first_error.lock().unwrap_or_else(PoisonError::into_inner);
                        first.get_or_insert(e);
                        return;
                    }
                }
            });
        }
    });
    match first_error
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A [`Write`] through positioned writes, one after another.
struct AtOffsets<'a, F> {
    write_at: &'a F,
    offset: u64,
}

impl<F: Fn(&[u8], u64) -> io::Result<()>> Write for AtOffsets<'_, F> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        (self.write_at)(bytes, self.offset)?;
        self.offset += bytes.len() as u64;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes `values` as little-endian bytes: on a little-endian machine the values' own bytes
/// (no conversion), else a wave of pieces converted in parallel at a time.
pub fn write_le<T: bytemuck::Pod + Sync, const W: usize>(
    out: &mut impl Write,
    values: &[T],
    bytes: impl Fn(T) -> [u8; W] + Sync,
) -> io::Result<()> {
    if cfg!(target_endian = "little") && W == std::mem::size_of::<T>() {
        return out.write_all(bytemuck::cast_slice(values));
    }
    for wave in values.chunks(PIECE * rayon::current_num_threads().max(1)) {
        let pieces: Vec<Vec<u8>> = chunked::values_of_chunks(wave.len(), PIECE, |_, piece| {
            wave[piece].iter().flat_map(|&v| bytes(v)).collect()
        });
        for piece in pieces {
            out.write_all(&piece)?;
        }
    }
    Ok(())
}

/// A binary result read back: the header and both arrays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryResult {
    /// The header.
    pub header: Header,
    /// Credits (`u64::MAX` for ⊤; winners only without [`Header::credits_computed`]).
    pub credits: Vec<u64>,
    /// Strategies (`u32::MAX` for no move).
    pub strategies: Vec<u32>,
}

/// Reads a whole binary result from bytes, checking its length.
pub fn read_binary(bytes: &[u8]) -> Result<BinaryResult, String> {
    let header = Header::parse(bytes)?;
    if header
        .n
        .checked_mul(12)
        .and_then(|b| b.checked_add(HEADER_BYTES))
        != Some(bytes.len() as u64)
    {
        return Err(format!(
            "a binary result of {} vertices has {} bytes, not {}",
            header.n,
            header.total_bytes(),
            bytes.len()
        ));
    }
    let credits_at = HEADER_BYTES as usize;
    let strategies_at = header.strategies_offset() as usize;
    let credits = bytes[credits_at..strategies_at]
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8")))
        .collect();
    let strategies = bytes[strategies_at..]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4")))
        .collect();
    Ok(BinaryResult {
        header,
        credits,
        strategies,
    })
}

// The layout's sentinels are the solver's.
const _: () = assert!(TOP == u64::MAX && NO_MOVE == u32::MAX);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::SolveStats;

    fn solution(credits_computed: bool) -> Solution {
        Solution {
            credit: vec![5, TOP, 0],
            strategy: vec![2, NO_MOVE, 2],
            stats: SolveStats::default(),
            credits_computed,
            parity: None,
        }
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let mut out = Vec::new();
        write_binary(&mut out, &solution(true)).unwrap();
        assert_eq!(out.len(), 32 + 12 * 3);
        assert_eq!(&out[..8], b"EGSRESLT");
        assert_eq!(out[8..12], [1, 0, 0, 0]);
        assert_eq!(out[12..16], [1, 0, 0, 0]);
        assert_eq!(out[16..24], [3, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(out[24..32], [0; 8]);
        assert_eq!(out[32..40], 5u64.to_le_bytes());
        assert_eq!(out[40..48], [0xff; 8]);
        assert_eq!(out[56..60], 2u32.to_le_bytes());
        assert_eq!(out[60..64], [0xff; 4]);
        let back = read_binary(&out).unwrap();
        assert!(back.header.credits_computed);
        assert_eq!(back.credits, vec![5, TOP, 0]);
        assert_eq!(back.strategies, vec![2, NO_MOVE, 2]);
    }

    #[test]
    fn files_written_in_parts_hold_the_streamed_bytes() {
        use std::os::unix::fs::FileExt;
        let n = 1000;
        let mut solution = solution(true);
        solution.credit = (0..n)
            .map(|v| if v % 7 == 0 { TOP } else { v * 3 })
            .collect();
        solution.strategy = (0..n as u32)
            .map(|v| if v % 5 == 0 { NO_MOVE } else { v / 2 })
            .collect();
        let mut streamed = Vec::new();
        write_binary(&mut streamed, &solution).unwrap();
        let dir = tempfile::tempdir().unwrap();
        // Parts of 40 bytes: neither array's length is a multiple; 1 MiB: one part each;
        // from one writer and from several.
        for (part_bytes, writers) in [(40, 1), (40, 2), (40, 7), (1 << 20, 2)] {
            let path = dir.path().join(format!("{part_bytes}-{writers}.bin"));
            let file = std::fs::File::create(&path).unwrap();
            let write_at = |bytes: &[u8], at: u64| file.write_all_at(bytes, at);
            write_in_parts(&write_at, &solution, part_bytes, writers).unwrap();
            drop(file);
            assert!(
                std::fs::read(&path).unwrap() == streamed,
                "parts of {part_bytes}, {writers} writers"
            );
        }
        let path = dir.path().join("whole.bin");
        let file = std::fs::File::create(&path).unwrap();
        write_binary_at(|bytes, at| file.write_all_at(bytes, at), &solution).unwrap();
        assert!(std::fs::read(&path).unwrap() == streamed);
        // The sequential path (big-endian machines) writes the same bytes.
        let sequential = std::sync::Mutex::new(vec![0u8; streamed.len()]);
        let write_at = |bytes: &[u8], at: u64| {
            let at = at as usize;
            sequential.lock().unwrap()[at..at + bytes.len()].copy_from_slice(bytes);
            Ok(())
        };
        let mut out = io::BufWriter::with_capacity(
            64,
            AtOffsets {
                write_at: &write_at,
                offset: 0,
            },
        );
        write_binary(&mut out, &solution).unwrap();
        out.flush().unwrap();
        drop(out);
        assert!(sequential.into_inner().unwrap() == streamed);
        // A failing write is the answer's error.
        let failing = |_: &[u8], _: u64| Err(io::Error::other("disk gone"));
        assert!(write_binary_at(failing, &solution).is_err());
    }

    #[test]
    fn answers_without_credits_say_so() {
        let mut out = Vec::new();
        write_binary(&mut out, &solution(false)).unwrap();
        assert_eq!(out[12..16], [0; 4]);
        assert!(!read_binary(&out).unwrap().header.credits_computed);
    }

    #[test]
    fn damaged_results_are_refused() {
        let mut out = Vec::new();
        write_binary(&mut out, &solution(true)).unwrap();
        assert!(read_binary(&out[..out.len() - 1]).is_err());
        let mut flags = out.clone();
        flags[12] = 3;
        assert!(read_binary(&flags).unwrap_err().contains("flags"));
        let mut magic = out;
        magic[0] = b'X';
        assert!(read_binary(&magic).unwrap_err().contains("magic"));
    }

    #[test]
    fn large_arrays_convert_in_pieces() {
        let values: Vec<u64> = (0..(PIECE as u64 * 3 + 7)).collect();
        let mut out = Vec::new();
        write_le(&mut out, &values, u64::to_le_bytes).unwrap();
        let back: Vec<u64> = out
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(back, values);
    }
}
