//! A TCP proxy between the server under test and PostgreSQL, so tests can take the
//! database away (`stop`), bring it back (`start`) or stall it (`pause`) without touching
//! the PostgreSQL server other tests share.

use std::{
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::watch,
    task::JoinHandle,
};

pub struct DbProxy {
    pub port: u16,
    upstream: SocketAddr,
    paused: watch::Sender<bool>,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
    /// Chunks read while paused and not yet passed on.
    held: Arc<AtomicUsize>,
}

impl DbProxy {
    pub async fn start_to(upstream: SocketAddr) -> Self {
        let (paused, _) = watch::channel(false);
        let mut proxy = Self {
            port: 0,
            upstream,
            paused,
            tasks: Arc::new(Mutex::new(Vec::new())),
            held: Arc::new(AtomicUsize::new(0)),
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        proxy.port = listener.local_addr().expect("addr").port();
        proxy.serve(listener);
        proxy
    }

    fn serve(&self, listener: TcpListener) {
        let upstream = self.upstream;
        let paused = self.paused.subscribe();
        let tasks = self.tasks.clone();
        let held = self.held.clone();
        let accept = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let Ok(outbound) = TcpStream::connect(upstream).await else {
                    continue;
                };
                let (ri, wi) = inbound.into_split();
                let (ro, wo) = outbound.into_split();
                let up = tokio::spawn(pump(ri, wo, paused.clone(), held.clone()));
                let down = tokio::spawn(pump(ro, wi, paused.clone(), held.clone()));
                tasks.lock().expect("lock").extend([up, down]);
            }
        });
        self.tasks.lock().expect("lock").push(accept);
    }

    /// The database is gone: the listener closes and every open connection is cut.
    pub fn stop(&self) {
        for task in self.tasks.lock().expect("lock").drain(..) {
            task.abort();
        }
    }

    /// The database is back, on the same port.
    pub async fn restart(&self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port))
            .await
            .expect("rebind proxy");
        self.serve(listener);
    }

    /// Stall (true) or resume (false) all traffic, as a database that stops answering.
    pub fn pause(&self, paused: bool) {
        let _ = self.paused.send(paused);
    }

    /// Waits until some traffic is being held by a pause (a query is in flight).
    pub async fn wait_for_held_traffic(&self) {
        for _ in 0..200 {
            if self.held.load(Ordering::SeqCst) > 0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("no traffic reached the paused proxy");
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut paused: watch::Receiver<bool>,
    held: Arc<AtomicUsize>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        while *paused.borrow() {
            if paused.changed().await.is_err() {
                return;
            }
        }
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let holding = *paused.borrow();
                if holding {
                    held.fetch_add(1, Ordering::SeqCst);
                }
                while *paused.borrow() {
                    if paused.changed().await.is_err() {
                        return;
                    }
                }
                if holding {
                    held.fetch_sub(1, Ordering::SeqCst);
                }
                if to.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}
