//! Downloads written whole to a temporary file first, then streamed: a school archive, a
//! OneRoster CSV zip. Writing at the database's pace holds the pooled connection and the
//! school's turn only as long as the snapshot takes to read, never as long as a slow client
//! takes to download, and memory holds a piece of the file, not the file.

use std::{
    fs::{File, OpenOptions},
    io::Read,
    os::unix::fs::OpenOptionsExt,
};

use actix_web::web::Bytes;
use futures_util::{Stream, stream};
use tokio::sync::mpsc;

use crate::error::{ApiError, ApiResult};

/// The spooled file travels to the response in pieces of this size, at most this many
/// queued.
pub const PIECE_BYTES: usize = 64 * 1024;
const QUEUED_PIECES: usize = 4;

/// A new file in the temporary folder, readable by this user only, already unlinked: it
/// is gone once the download ends or is dropped, whatever happens.
pub fn spool_file(what: &str) -> ApiResult<File> {
    let path = std::env::temp_dir().join(format!(
        "school-service-{what}-{}",
        uuid::Uuid::new_v4().simple()
    ));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(ApiError::internal)?;
    std::fs::remove_file(&path).map_err(ApiError::internal)?;
    Ok(file)
}

/// The spooled file (read from where it stands) as a response body, read on a blocking
/// thread. A read error ends the stream with an error, which aborts the download, so a cut
/// file is never taken for a whole one.
pub fn stream_file(spool: File) -> impl Stream<Item = ApiResult<Bytes>> {
    let (sender, pieces) = mpsc::channel::<ApiResult<Bytes>>(QUEUED_PIECES);
    actix_web::rt::task::spawn_blocking(move || send_pieces(spool, &sender));
    stream::unfold(pieces, |mut pieces| async move {
        pieces.recv().await.map(|piece| (piece, pieces))
    })
}

/// Sends the file in pieces of `PIECE_BYTES` over the bounded channel until it ends or the
/// download is closed.
fn send_pieces(mut spool: File, sender: &mpsc::Sender<ApiResult<Bytes>>) {
    loop {
        let mut piece = vec![0u8; PIECE_BYTES];
        let piece = match spool.read(&mut piece) {
            Ok(0) => return,
            Ok(read) => {
                piece.truncate(read);
                Ok(Bytes::from(piece))
            }
            Err(err) => Err(ApiError::internal(err)),
        };
        let failed = piece.is_err();
        if sender.blocking_send(piece).is_err() || failed {
            return;
        }
    }
}
