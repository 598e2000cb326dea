//! Which IP addresses a tool must never be sent to.
//!
//! [`classify`] is a pure function of the address. An IPv6 address that
//! carries an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
//! `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`,
//! 6to4 `2002::/16`) is judged by the IPv4 address it carries, since a
//! translator or the host's own stack may deliver it there.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is forbidden, as a stable machine-readable name.
///
/// The string returned by [`AddressClass::as_str`] is a wire contract. New
/// classes may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressClass {
    /// A cloud instance metadata service: `169.254.169.254`,
    /// `169.254.170.2` (ECS task metadata), `100.100.100.200` (Alibaba),
    /// `168.63.129.16` (Azure wire server), `192.0.0.192` (Oracle),
    /// `fd00:ec2::254` (AWS over IPv6). Never allowed, not even with
    /// [`allow_private_addresses`](super::danger::DangerousUrlPolicyConfig::allow_private_addresses).
    Metadata,
    /// `0.0.0.0/8` ("this network"; Linux connects `0.0.0.0` to the local
    /// host) and `::`.
    Unspecified,
    /// `127.0.0.0/8` and `::1`.
    Loopback,
    /// RFC 1918: `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`.
    Private,
    /// Carrier-grade NAT, RFC 6598: `100.64.0.0/10`.
    SharedAddressSpace,
    /// `169.254.0.0/16` and `fe80::/10`.
    LinkLocal,
    /// Unique local IPv6, `fc00::/7`.
    UniqueLocal,
    /// `224.0.0.0/4` and `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`,
    /// `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15` and `2001:2::/48`.
    Benchmarking,
    /// Any other special-purpose or unrouted range: `192.0.0.0/24`,
    /// `192.88.99.0/24`, `240.0.0.0/4`; for IPv6 everything outside global
    /// unicast `2000::/3` that carries no IPv4 address, site-local
    /// `fec0::/10`, discard-only `100::/64`, the IETF protocol assignments
    /// `2001::/23` (Teredo `2001::/32` included), local-use NAT64
    /// `64:ff9b:1::/48`, SRv6 `5f00::/16`.
    Reserved,
}

impl AddressClass {
    /// The stable wire name of the class, such as `loopback`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Metadata => "metadata",
            Self::Unspecified => "unspecified",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::SharedAddressSpace => "shared_address_space",
            Self::LinkLocal => "link_local",
            Self::UniqueLocal => "unique_local",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Documentation => "documentation",
            Self::Benchmarking => "benchmarking",
            Self::Reserved => "reserved",
        }
    }

    /// Every class, in a stable order.
    pub const ALL: [AddressClass; 12] = [
        Self::Metadata,
        Self::Unspecified,
        Self::Loopback,
        Self::Private,
        Self::SharedAddressSpace,
        Self::LinkLocal,
        Self::UniqueLocal,
        Self::Multicast,
        Self::Broadcast,
        Self::Documentation,
        Self::Benchmarking,
        Self::Reserved,
    ];
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// IPv4 metadata service addresses that are not already link-local.
const METADATA_V4: [Ipv4Addr; 5] = [
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(169, 254, 170, 2),
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(168, 63, 129, 16),
    Ipv4Addr::new(192, 0, 0, 192),
];

/// `fd00:ec2::254`.
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// The class that forbids `ip`, or `None` for an ordinary public address.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    if METADATA_V4.contains(&ip) {
        return Some(AddressClass::Metadata);
    }
    let [a, b, c, _] = ip.octets();
    let class = match (a, b, c) {
        (0, _, _) => AddressClass::Unspecified,
        (10, _, _) => AddressClass::Private,
        (100, 64..=127, _) => AddressClass::SharedAddressSpace,
        (127, _, _) => AddressClass::Loopback,
        (169, 254, _) => AddressClass::LinkLocal,
        (172, 16..=31, _) => AddressClass::Private,
        (192, 0, 0) | (192, 88, 99) => AddressClass::Reserved,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddressClass::Documentation,
        (192, 168, _) => AddressClass::Private,
        (198, 18..=19, _) => AddressClass::Benchmarking,
        (224..=239, _, _) => AddressClass::Multicast,
        _ if ip == Ipv4Addr::BROADCAST => AddressClass::Broadcast,
        (240..=255, _, _) => AddressClass::Reserved,
        _ => return None,
    };
    Some(class)
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    if ip == METADATA_V6 {
        return Some(AddressClass::Metadata);
    }
    if ip == Ipv6Addr::UNSPECIFIED {
        return Some(AddressClass::Unspecified);
    }
    if ip == Ipv6Addr::LOCALHOST {
        return Some(AddressClass::Loopback);
    }
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let [s0, s1, s2, s3, ..] = ip.segments();
    let class = match (s0, s1, s2, s3) {
        (0x0064, 0xff9b, 0x0001, _) => AddressClass::Reserved,
        (0x0100, 0, 0, 0) => AddressClass::Reserved,
        (0x2001, 0x0db8, _, _) => AddressClass::Documentation,
        (0x2001, 0x0002, 0, _) => AddressClass::Benchmarking,
        (0x2001, 0x0000..=0x01ff, _, _) => AddressClass::Reserved,
        (0x3fff, 0x0000..=0x0fff, _, _) => AddressClass::Documentation,
        (0x5f00, _, _, _) => AddressClass::Reserved,
        (0xfc00..=0xfdff, _, _, _) => AddressClass::UniqueLocal,
        (0xfe80..=0xfebf, _, _, _) => AddressClass::LinkLocal,
        (0xfec0..=0xfeff, _, _, _) => AddressClass::Reserved,
        (0xff00..=0xffff, _, _, _) => AddressClass::Multicast,
        (0x2000..=0x3fff, _, _, _) => return None,
        _ => AddressClass::Reserved,
    };
    Some(class)
}

/// The IPv4 address an IPv6 address carries, for the forms a host or a
/// translator delivers to IPv4.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let [s0, s1, s2, s3, s4, s5, s6, s7] = ip.segments();
    let low = Ipv4Addr::new(
        (s6 >> 8) as u8,
        (s6 & 0xff) as u8,
        (s7 >> 8) as u8,
        (s7 & 0xff) as u8,
    );
    match (s0, s1, s2, s3, s4, s5) {
        // IPv4-compatible `::a.b.c.d` (deprecated) and IPv4-mapped `::ffff:a.b.c.d`.
        (0, 0, 0, 0, 0, 0) | (0, 0, 0, 0, 0, 0xffff) => Some(low),
        // IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765).
        (0, 0, 0, 0, 0xffff, 0) => Some(low),
        // NAT64 well-known prefix `64:ff9b::/96` (RFC 6052).
        (0x0064, 0xff9b, 0, 0, 0, 0) => Some(low),
        // 6to4 `2002:aabb:ccdd::/48` (RFC 3056).
        (0x2002, ..) => Some(Ipv4Addr::new(
            (s1 >> 8) as u8,
            (s1 & 0xff) as u8,
            (s2 >> 8) as u8,
            (s2 & 0xff) as u8,
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Option<AddressClass> {
        classify(s.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)))
    }

    #[test]
    fn ipv4_ranges() {
        assert_eq!(c("127.0.0.1"), Some(AddressClass::Loopback));
        assert_eq!(c("127.255.255.254"), Some(AddressClass::Loopback));
        assert_eq!(c("10.1.2.3"), Some(AddressClass::Private));
        assert_eq!(c("172.16.0.1"), Some(AddressClass::Private));
        assert_eq!(c("172.31.255.255"), Some(AddressClass::Private));
        assert_eq!(c("172.32.0.1"), None);
        assert_eq!(c("172.15.255.255"), None);
        assert_eq!(c("192.168.1.1"), Some(AddressClass::Private));
        assert_eq!(c("100.64.0.1"), Some(AddressClass::SharedAddressSpace));
        assert_eq!(c("100.127.255.255"), Some(AddressClass::SharedAddressSpace));
        assert_eq!(c("100.128.0.1"), None);
        assert_eq!(c("100.63.255.255"), None);
        assert_eq!(c("169.254.1.1"), Some(AddressClass::LinkLocal));
        assert_eq!(c("169.254.169.254"), Some(AddressClass::Metadata));
        assert_eq!(c("100.100.100.200"), Some(AddressClass::Metadata));
        assert_eq!(c("168.63.129.16"), Some(AddressClass::Metadata));
        assert_eq!(c("0.0.0.0"), Some(AddressClass::Unspecified));
        assert_eq!(c("0.1.2.3"), Some(AddressClass::Unspecified));
        assert_eq!(c("224.0.0.1"), Some(AddressClass::Multicast));
        assert_eq!(c("239.255.255.255"), Some(AddressClass::Multicast));
        assert_eq!(c("255.255.255.255"), Some(AddressClass::Broadcast));
        assert_eq!(c("240.0.0.1"), Some(AddressClass::Reserved));
        assert_eq!(c("192.0.2.1"), Some(AddressClass::Documentation));
        assert_eq!(c("198.51.100.7"), Some(AddressClass::Documentation));
        assert_eq!(c("203.0.113.9"), Some(AddressClass::Documentation));
        assert_eq!(c("198.18.0.1"), Some(AddressClass::Benchmarking));
        assert_eq!(c("198.19.255.255"), Some(AddressClass::Benchmarking));
        assert_eq!(c("198.20.0.1"), None);
        assert_eq!(c("192.0.0.8"), Some(AddressClass::Reserved));
        assert_eq!(c("8.8.8.8"), None);
        assert_eq!(c("93.184.216.34"), None);
        assert_eq!(c("1.1.1.1"), None);
    }

    #[test]
    fn ipv6_ranges() {
        assert_eq!(c("::"), Some(AddressClass::Unspecified));
        assert_eq!(c("::1"), Some(AddressClass::Loopback));
        assert_eq!(c("fe80::1"), Some(AddressClass::LinkLocal));
        assert_eq!(c("febf::1"), Some(AddressClass::LinkLocal));
        assert_eq!(c("fec0::1"), Some(AddressClass::Reserved));
        assert_eq!(c("fc00::1"), Some(AddressClass::UniqueLocal));
        assert_eq!(c("fd12:3456::1"), Some(AddressClass::UniqueLocal));
        assert_eq!(c("fd00:ec2::254"), Some(AddressClass::Metadata));
        assert_eq!(c("ff02::1"), Some(AddressClass::Multicast));
        assert_eq!(c("2001:db8::1"), Some(AddressClass::Documentation));
        assert_eq!(c("3fff::1"), Some(AddressClass::Documentation));
        assert_eq!(c("2001:2::1"), Some(AddressClass::Benchmarking));
        assert_eq!(c("2001::1"), Some(AddressClass::Reserved));
        assert_eq!(c("100::1"), Some(AddressClass::Reserved));
        assert_eq!(c("64:ff9b:1::1"), Some(AddressClass::Reserved));
        assert_eq!(c("1234::1"), Some(AddressClass::Reserved));
        assert_eq!(c("2606:4700:4700::1111"), None);
        assert_eq!(c("2a00:1450:4001::1"), None);
    }

    #[test]
    fn ipv6_carrying_ipv4() {
        assert_eq!(c("::ffff:127.0.0.1"), Some(AddressClass::Loopback));
        assert_eq!(c("::ffff:7f00:1"), Some(AddressClass::Loopback));
        assert_eq!(c("::127.0.0.1"), Some(AddressClass::Loopback));
        assert_eq!(c("::ffff:0:127.0.0.1"), Some(AddressClass::Loopback));
        assert_eq!(c("64:ff9b::169.254.169.254"), Some(AddressClass::Metadata));
        assert_eq!(c("64:ff9b::a9fe:a9fe"), Some(AddressClass::Metadata));
        assert_eq!(c("2002:7f00:1::1"), Some(AddressClass::Loopback));
        assert_eq!(c("2002:a9fe:a9fe::"), Some(AddressClass::Metadata));
        assert_eq!(c("2002:c0a8:101::1"), Some(AddressClass::Private));
        assert_eq!(c("::ffff:0.0.0.0"), Some(AddressClass::Unspecified));
        assert_eq!(c("::ffff:8.8.8.8"), None);
        assert_eq!(c("64:ff9b::8.8.8.8"), None);
        assert_eq!(c("2002:808:808::1"), None);
    }

    #[test]
    fn names_are_stable_and_distinct() {
        let mut names: Vec<&str> = AddressClass::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), AddressClass::ALL.len());
    }
}
