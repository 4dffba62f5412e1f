//! Where a webhook may be sent (API.md 9): `https` only, and never to a loopback,
//! private, link-local, unspecified, multicast or the server's own address, unless
//! `WEBHOOK_ALLOW_INSECURE` (which also allows `http`). Checked when a URL is saved and
//! again, on the freshly resolved addresses, at every delivery; the delivery then connects
//! to the address that was checked, so a name cannot resolve to another one in between.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};

use reqwest::Url;

/// The longest URL a subscription may have.
pub const MAX_URL_CHARS: usize = 2000;

/// A URL that may be a destination before its name is resolved: scheme, host, no
/// credentials in it.
pub fn parse(raw: &str, allow_insecure: bool) -> Result<Url, String> {
    if raw.chars().count() > MAX_URL_CHARS {
        return Err(format!(
            "ensure this field has at most {MAX_URL_CHARS} characters"
        ));
    }
    let url = Url::parse(raw).map_err(|_| "enter a valid URL".to_owned())?;
    match url.scheme() {
        "https" => {}
        "http" if allow_insecure => {}
        _ => return Err("the URL must use https".into()),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("the URL must name a host".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("the URL must not carry credentials".into());
    }
    Ok(url)
}

/// The addresses this server may be reached at: what it listens on, and the address its
/// traffic leaves from (found without sending anything).
pub fn own_addresses(bind: Option<IpAddr>) -> Vec<IpAddr> {
    let mut own: Vec<IpAddr> = bind.into_iter().filter(|ip| !ip.is_unspecified()).collect();
    for probe in ["8.8.8.8:53", "[2001:4860:4860::8888]:53"] {
        let local = if probe.starts_with('[') {
            "[::]:0"
        } else {
            "0.0.0.0:0"
        };
        if let Ok(socket) = UdpSocket::bind(local) {
            if socket.connect(probe).is_ok() {
                if let Ok(addr) = socket.local_addr() {
                    own.push(addr.ip());
                }
            }
        }
    }
    own
}

/// Why `ip` may not be a destination, if it may not.
pub fn forbidden(ip: IpAddr, own: &[IpAddr]) -> Option<&'static str> {
    let kind = match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => forbidden_v4(v4),
            None => forbidden_v6(v6),
        },
    };
    kind.or_else(|| own.contains(&ip).then_some("the server's own address"))
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        // RFC 1918 and the carrier-grade NAT range (RFC 6598).
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() || a == 0 || a >= 240 {
        Some("not a unicast address")
    } else {
        None
    }
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some("not a unicast address")
    } else {
        None
    }
}

/// The port a URL reaches.
fn port_of(url: &Url) -> u16 {
    url.port_or_known_default().unwrap_or(443)
}

/// Checks every address `addrs` holds; answers the first, to connect to.
fn checked(
    addrs: impl Iterator<Item = SocketAddr>,
    allow_insecure: bool,
    own: &[IpAddr],
) -> Result<SocketAddr, String> {
    let addrs: Vec<SocketAddr> = addrs.collect();
    let first = *addrs.first().ok_or("the host has no address")?;
    if !allow_insecure {
        for addr in &addrs {
            if let Some(why) = forbidden(addr.ip(), own) {
                return Err(format!("the host resolves to {} ({why})", addr.ip()));
            }
        }
    }
    Ok(first)
}

/// Resolves and checks `url` (blocking: for a save, on the blocking pool).
pub fn resolve_blocking(
    url: &Url,
    allow_insecure: bool,
    own: &[IpAddr],
) -> Result<SocketAddr, String> {
    let host = url.host_str().unwrap_or_default().trim_matches(['[', ']']);
    let addrs = (host, port_of(url))
        .to_socket_addrs()
        .map_err(|_| "the host does not resolve".to_owned())?;
    checked(addrs, allow_insecure, own)
}

/// Resolves and checks `url` at delivery time.
pub async fn resolve(
    url: &Url,
    allow_insecure: bool,
    own: &[IpAddr],
) -> Result<SocketAddr, String> {
    let host = url
        .host_str()
        .unwrap_or_default()
        .trim_matches(['[', ']'])
        .to_owned();
    let addrs = tokio::net::lookup_host((host.as_str(), port_of(url)))
        .await
        .map_err(|_| "the host does not resolve".to_owned())?;
    checked(addrs, allow_insecure, own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_destinations_are_named() {
        let own: Vec<IpAddr> = vec!["203.0.113.9".parse().expect("ip")];
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "203.0.113.9",
        ] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert!(forbidden(ip, &own).is_some(), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:2800:220:1::1"] {
            assert!(forbidden(ip.parse().expect("ip"), &own).is_none(), "{ip}");
        }
    }

    #[test]
    fn only_https_without_credentials_unless_insecure() {
        assert!(parse("https://hooks.example.org/x", false).is_ok());
        assert!(parse("http://hooks.example.org/x", false).is_err());
        assert!(parse("http://hooks.example.org/x", true).is_ok());
        assert!(parse("https://u:p@hooks.example.org/", false).is_err());
        assert!(parse("ftp://hooks.example.org/", true).is_err());
        assert!(parse("not a url", true).is_err());
    }
}
