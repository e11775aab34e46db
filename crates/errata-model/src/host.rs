//! Whether a URL's host is public: the one definition shared by `unsafe-url` (a link in
//! the knowledge base) and `errata links` (before every request, redirects included), so
//! that neither can be made to reach a loopback, private, link-local or internal host.

use std::net::IpAddr;

/// `Ok` for a public host; else why not. `host` is a URL's host as written: a domain, an
/// IPv4 address, or an IPv6 address with or without brackets.
pub fn public_host(host: &str) -> Result<(), String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return public_ip(ip);
    }
    let d = host.trim_end_matches('.').to_ascii_lowercase();
    if d.is_empty()
        || d == "localhost"
        || d.ends_with(".localhost")
        || d.ends_with(".local")
        || d.ends_with(".internal")
        || !d.contains('.')
    {
        Err(format!("host `{d}` is not a public host"))
    } else {
        Ok(())
    }
}

fn public_ip(ip: IpAddr) -> Result<(), String> {
    let private = match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.octets()[0] == 0
        }
        IpAddr::V6(v6) => {
            // An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is that address.
            if let Some(v4) = v6.to_ipv4_mapped() {
                return public_ip(IpAddr::V4(v4));
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xfe00) == 0xfc00
                || (v6.segments()[0] & 0xffc0) == 0xfe80
        }
    };
    if private {
        Err(format!("address {ip} is loopback, private or link-local"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::public_host;

    #[test]
    fn private_and_internal_hosts_are_refused() {
        for host in [
            "localhost",
            "api.localhost",
            "printer.local",
            "metadata.google.internal",
            "intranet",
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.10",
            "169.254.169.254",
            "0.0.0.0",
            "[::1]",
            "[fd00::1]",
            "[fe80::1]",
            "[::ffff:127.0.0.1]",
        ] {
            assert!(public_host(host).is_err(), "{host}");
        }
        for host in [
            "docs.nvidia.com",
            "github.com",
            "8.8.8.8",
            "[2606:4700::1111]",
        ] {
            assert!(public_host(host).is_ok(), "{host}");
        }
    }
}
