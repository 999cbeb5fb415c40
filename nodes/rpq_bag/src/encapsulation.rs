//! The 4-byte RTPS encapsulation header that starts every CDR payload in a bag.
//!
//! Bytes 0-1 name the representation (big-endian), bytes 2-3 are options. ROS 2 publishers
//! send `00 01 00 00` (plain CDR, little endian).
//!
//! ```
//! use rpq_bag::encapsulation::{check, Encapsulation};
//!
//! assert_eq!(check(&[0, 1, 0, 0, 7]).unwrap(), Encapsulation::CdrLe);
//! assert!(check(&[0, 1]).is_err());
//! assert!(check(&[0x7b, 0x22, 0, 0]).is_err()); // JSON, not CDR
//! ```

/// Representation identifiers of DDS-XTypes 1.3, table 60.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encapsulation {
    /// Plain CDR (XCDR1), big endian.
    CdrBe,
    /// Plain CDR (XCDR1), little endian: what ROS 2 uses.
    CdrLe,
    /// Parameter-list CDR (XCDR1), big endian.
    PlCdrBe,
    /// Parameter-list CDR (XCDR1), little endian.
    PlCdrLe,
    /// XCDR2 plain, big endian.
    Cdr2Be,
    /// XCDR2 plain, little endian.
    Cdr2Le,
    /// XCDR2 parameter list, big endian.
    PlCdr2Be,
    /// XCDR2 parameter list, little endian.
    PlCdr2Le,
    /// XCDR2 delimited, big endian.
    DCdr2Be,
    /// XCDR2 delimited, little endian.
    DCdr2Le,
}

impl Encapsulation {
    /// Whether the body is little endian.
    pub fn is_little_endian(self) -> bool {
        matches!(
            self,
            Self::CdrLe | Self::PlCdrLe | Self::Cdr2Le | Self::PlCdr2Le | Self::DCdr2Le
        )
    }
}

/// Reads the encapsulation header of `payload`; the reason text explains a rejection.
pub fn check(payload: &[u8]) -> Result<Encapsulation, String> {
    let Some(head) = payload.get(..4) else {
        return Err(format!(
            "{} bytes is shorter than the 4-byte encapsulation header",
            payload.len()
        ));
    };
    Ok(match [head[0], head[1]] {
        [0x00, 0x00] => Encapsulation::CdrBe,
        [0x00, 0x01] => Encapsulation::CdrLe,
        [0x00, 0x02] => Encapsulation::PlCdrBe,
        [0x00, 0x03] => Encapsulation::PlCdrLe,
        [0x00, 0x10] => Encapsulation::Cdr2Be,
        [0x00, 0x11] => Encapsulation::Cdr2Le,
        [0x00, 0x12] => Encapsulation::PlCdr2Be,
        [0x00, 0x13] => Encapsulation::PlCdr2Le,
        [0x00, 0x14] => Encapsulation::DCdr2Be,
        [0x00, 0x15] => Encapsulation::DCdr2Le,
        [a, b] => return Err(format!("unknown encapsulation identifier 0x{a:02x}{b:02x}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_identifiers() {
        assert_eq!(check(&[0, 0, 0, 0]).unwrap(), Encapsulation::CdrBe);
        assert_eq!(check(&[0, 0x11, 0, 0]).unwrap(), Encapsulation::Cdr2Le);
        assert!(check(&[0, 1, 0, 0]).unwrap().is_little_endian());
        assert!(!check(&[0, 0x12, 0, 0]).unwrap().is_little_endian());
        assert!(check(&[]).unwrap_err().contains("0 bytes"));
        assert!(check(&[0, 1, 0]).is_err());
        assert!(check(&[1, 1, 0, 0]).unwrap_err().contains("0x0101"));
        assert!(check(&[0, 4, 0, 0]).is_err()); // XML representation: not CDR
    }
}
