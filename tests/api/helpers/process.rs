//! The real binary: one command (`cli`), or `serve` as a process whose log is read.

use super::JWT_SECRET;

/// Runs the real binary: `command` split on spaces, with `DATABASE_URL` and `env`.
/// Answers (success, stdout, stderr).
pub fn cli(db_url: &str, command: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_school-service"))
        .args(command.split_whitespace())
        .env("DATABASE_URL", db_url)
        .env("BCRYPT_COST", "4")
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("run the binary");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The real binary serving on a free port, its log (stderr) read as it comes.
pub struct ServerProcess {
    pub port: u16,
    child: std::process::Child,
    reader: std::io::BufReader<std::process::ChildStderr>,
    log: String,
}

impl ServerProcess {
    /// Starts `school-service serve` on `db_url` with `env`, and waits for its port.
    pub fn start(db_url: &str, env: &[(&str, &str)]) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_school-service"))
            .arg("serve")
            .env("DATABASE_URL", db_url)
            .env("JWT_SECRET", JWT_SECRET)
            .env("BIND_ADDR", "127.0.0.1:0")
            .env("BCRYPT_COST", "4")
            .envs(env.iter().copied())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn server");
        let mut reader = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        let mut log = String::new();
        let port = loop {
            let mut line = String::new();
            assert!(
                reader.read_line(&mut line).expect("read") > 0,
                "server exited: {log}"
            );
            log.push_str(&line);
            if let Some(rest) = line.split("(port ").nth(1) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                break digits.parse::<u16>().expect("port");
            }
        };
        Self {
            port,
            child,
            reader,
            log,
        }
    }

    /// Stops the server; answers everything it logged.
    pub fn stop(mut self) -> String {
        use std::io::Read;
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut rest = String::new();
        let _ = self.reader.read_to_string(&mut rest);
        self.log + &rest
    }
}
