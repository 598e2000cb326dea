//! Reading the files a config names (the config itself, schemas, tool lists,
//! policies, entities): regular files only, and never more than
//! [`MAX_FILE_BYTES`], so a path to a device, a pipe or a huge file is a
//! clear error instead of a hang or an exhausted memory.

use std::io::{self, Read as _};
use std::path::Path;

/// The largest file a config may name (64 MiB).
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;

/// The bytes of the regular file at `path`, at most [`MAX_FILE_BYTES`].
pub(crate) fn read(path: &Path) -> io::Result<Vec<u8>> {
    read_capped(path, MAX_FILE_BYTES)
}

/// The text of the regular file at `path`, at most [`MAX_FILE_BYTES`].
pub(crate) fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (first bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the limit of {cap} bytes"),
        )
    };
    if meta.len() > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow while it is read: never take more than the cap.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn refuses_what_is_not_a_small_regular_file() {
        let dir = std::env::temp_dir().join(format!("toolgate-fsread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = read(&dir).unwrap_err();
        assert!(
            e.to_string().contains("not a regular file") || e.kind() == io::ErrorKind::IsADirectory,
            "{e}"
        );
        #[cfg(unix)]
        {
            let e = read(Path::new("/dev/zero")).unwrap_err();
            assert_eq!(e.to_string(), "not a regular file");
        }
        let file = dir.join("big");
        std::fs::write(&file, vec![b'a'; 101]).unwrap();
        let e = read_capped(&file, 100).unwrap_err();
        assert_eq!(e.to_string(), "larger than the limit of 100 bytes");
        assert_eq!(read_capped(&file, 101).unwrap().len(), 101);
        std::fs::write(&file, [0xff, b'a']).unwrap();
        assert!(read_to_string(&file)
            .unwrap_err()
            .to_string()
            .contains("not UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
