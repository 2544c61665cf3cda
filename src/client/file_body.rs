//! A file sent as a request body: read ahead on a thread of its own in large chunks, so that
//! reading and sending overlap and the connection never waits on a small read.
//!
//! `tokio::fs` reads through the blocking pool, a hop between threads for each read; with
//! the 64 KiB chunks `submit` used, a 143 MB `egb` took 2,200 hops one after another, and the
//! server received it at about 0.5 GB/s on the 2-core build machine where the bytes alone
//! would pass at twice that (BENCHMARKS.md §9). Here one thread reads [`CHUNK`]s into a
//! queue of [`AHEAD`] while the connection sends the ones before.

use bytes::Bytes;
use futures::Stream;
use std::io::Read;
use std::path::Path;

/// Bytes per read.
const CHUNK: usize = 4 << 20;
/// Chunks read ahead of the connection.
const AHEAD: usize = 4;

/// The file at `path` as a stream of chunks, with its length (opened here, so a missing file
/// is an error before any request is made).
pub(super) fn stream(
    path: &Path,
) -> std::io::Result<(
    u64,
    impl Stream<Item = std::io::Result<Bytes>> + Send + 'static,
)> {
    let mut file = std::fs::File::open(path)?;
    let length = file.metadata()?.len();
    let (tx, mut rx) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(AHEAD);
    std::thread::Builder::new()
        .name("egsolve-send".into())
        .spawn(move || {
            loop {
                // Into the vector's spare room, not cleared first.
                let mut chunk = Vec::with_capacity(CHUNK);
                let read = (&mut file).take(CHUNK as u64).read_to_end(&mut chunk);
                let done = !matches!(read, Ok(n) if n == CHUNK);
                let item = read.map(|_| Bytes::from(chunk));
                // Stops when the request is dropped (the receiver gone).
                if matches!(&item, Ok(b) if b.is_empty()) || tx.blocking_send(item).is_err() || done
                {
                    return;
                }
            }
        })?;
    Ok((length, futures::stream::poll_fn(move |cx| rx.poll_recv(cx))))
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    /// The chunks join to the file, whatever its size against the chunk's.
    #[tokio::test]
    async fn the_chunks_are_the_file() {
        let dir = tempfile::tempdir().unwrap();
        for size in [
            0usize,
            1,
            super::CHUNK - 1,
            super::CHUNK,
            2 * super::CHUNK + 17,
        ] {
            let path = dir.path().join(format!("f{size}"));
            let bytes: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            let (length, stream) = super::stream(&path).unwrap();
            assert_eq!(length, size as u64);
            let chunks: Vec<_> = stream.collect().await;
            let joined: Vec<u8> = chunks
                .into_iter()
                .flat_map(|c| c.unwrap().to_vec())
                .collect();
            assert!(joined == bytes, "size {size}");
        }
        assert!(super::stream(&dir.path().join("missing")).is_err());
    }
}
