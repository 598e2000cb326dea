//! A PostgreSQL server of a test's own: a fresh cluster (`initdb`, then
//! `pg_ctl start`) in a temporary folder, on a free port of 127.0.0.1,
//! optionally with TLS on a certificate the test made. For what the shared
//! server cannot be made to do (TLS, its configuration changed mid-test).
//!
//! The server's programs are found in `TOOLGATE_TEST_PG_BIN`, else in the
//! newest `/usr/lib/postgresql/N/bin` (Debian's layout), else beside
//! `pg_config --bindir`. Without them a test says so and passes, unless
//! `TOOLGATE_REQUIRE_EXTERNAL=1` (CI): see [`crate::skip`]. As root, the
//! programs run as the `postgres` user (PostgreSQL refuses root), which
//! then owns the folder.

use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The environment variable naming the folder of `initdb` and `pg_ctl`.
pub const PG_BIN_ENV: &str = "TOOLGATE_TEST_PG_BIN";

/// A running PostgreSQL cluster of one test, stopped and removed with the
/// value. Its superuser is `postgres`, trusted without a password.
#[derive(Debug)]
pub struct PgServer {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A certificate and its key, both PEM, for the server.
#[derive(Debug, Clone, Copy)]
pub struct ServerTls<'a> {
    /// The certificate chain (the server's first).
    pub cert_pem: &'a str,
    /// Its private key.
    pub key_pem: &'a str,
}

impl PgServer {
    /// Starts a new cluster, with `ssl = on` on `tls` when given; `None`
    /// when the server's programs are not on this machine (after saying so
    /// through [`crate::skip`]).
    ///
    /// # Panics
    ///
    /// When a step fails (the log is in the message).
    #[expect(clippy::panic, reason = "a failed setup fails the test")]
    pub fn start(tls: Option<ServerTls<'_>>) -> Option<Self> {
        let Some(bin) = find_bin() else {
            crate::skip(&format!(
                "no PostgreSQL server programs (initdb, pg_ctl): set {PG_BIN_ENV} or install \
                 Debian's postgresql"
            ));
            return None;
        };
        let as_postgres = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
        let dir = std::env::temp_dir().join(format!(
            "toolgate-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let port = free_port();
        let server = Self {
            bin,
            dir,
            port,
            as_postgres,
        };
        server.chown();
        let data = server.data();
        server.run(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "-A".as_ref(),
                "trust".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
                "--no-sync".as_ref(),
            ],
        );
        let mut conf = format!(
            "\nlisten_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{}'\n\
             fsync = off\nmax_connections = 40\n",
            server.dir.display()
        );
        if let Some(tls) = tls {
            write_file(&data.join("server.crt"), tls.cert_pem, 0o644);
            write_file(&data.join("server.key"), tls.key_pem, 0o600);
            conf.push_str("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
        }
        append_file(&data.join("postgresql.conf"), &conf);
        server.chown();
        let log = server.dir.join("log");
        server.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "start".as_ref(),
            ],
        );
        Some(server)
    }

    /// The port it listens on (127.0.0.1 only).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A plaintext URL of its database `postgres`, as the superuser.
    pub fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres?sslmode=disable",
            self.port
        )
    }

    /// Runs `sql` as the superuser, over plaintext (`ALTER SYSTEM …`).
    ///
    /// # Panics
    ///
    /// When it cannot connect or `sql` fails.
    #[expect(clippy::panic, reason = "a failed step fails the test")]
    pub fn execute(&self, sql: &str) {
        let mut c = postgres::Client::connect(&self.url(), postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to the test's server: {e}"));
        c.batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// A superuser connection over plaintext, for inspection.
    ///
    /// # Panics
    ///
    /// When it cannot connect.
    #[expect(clippy::panic, reason = "a failed step fails the test")]
    pub fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.url(), postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to the test's server: {e}"))
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn chown(&self) {
        if !self.as_postgres {
            return;
        }
        let ok = Command::new("chown")
            .args(["-R", "postgres:"])
            .arg(&self.dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "chown -R postgres: {}", self.dir.display());
        // The postgres user must reach the folder through its parents.
        let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700));
    }

    /// Runs one of the server's programs (as `postgres` when root).
    #[expect(clippy::panic, reason = "a failed setup fails the test")]
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) {
        let exe = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd
            .args(args)
            .current_dir(&self.dir)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
        if !out.status.success() {
            let log = std::fs::read_to_string(self.dir.join("log")).unwrap_or_default();
            panic!(
                "{program} failed: {}\n{}\n{log}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.data();
        let exe = self.bin.join("pg_ctl");
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let _ = cmd
            .arg("-D")
            .arg(&data)
            .args(["-m", "immediate", "-w", "stop"])
            .current_dir(&self.dir)
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn find_bin() -> Option<PathBuf> {
    let has = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Some(d) = std::env::var_os(PG_BIN_ENV) {
        let d = PathBuf::from(d);
        return has(&d).then_some(d);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((v, e.path().join("bin")))
        })
        .filter(|(_, d)| has(d))
        .collect();
    versions.sort();
    if let Some((_, d)) = versions.pop() {
        return Some(d);
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let d = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    has(&d).then_some(d)
}

/// A port nobody listens on now (bound, read and released).
#[expect(clippy::panic, reason = "a failed setup fails the test")]
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

#[expect(clippy::panic, reason = "a failed setup fails the test")]
fn write_file(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

#[expect(clippy::panic, reason = "a failed setup fails the test")]
fn append_file(path: &Path, text: &str) {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    f.write_all(text.as_bytes())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
