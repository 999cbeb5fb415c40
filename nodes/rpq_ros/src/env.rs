//! The ROS environment variables, read as rcl and the RMW layer read them.
//!
//! | variable | meaning here |
//! |---|---|
//! | `ROS_DOMAIN_ID` | DDS domain, `0..=232` (unset or empty: 0) |
//! | `ROS_AUTOMATIC_DISCOVERY_RANGE` | `SUBNET` (default), `LOCALHOST`, `OFF`, `SYSTEM_DEFAULT` |
//! | `ROS_LOCALHOST_ONLY` | legacy; `1` means `LOCALHOST` and wins over the range, as in Jazzy |
//! | `RMW_IMPLEMENTATION` | chooses how service requests are tagged on the wire |
//! | `ROS_STATIC_PEERS` | not supported: noted (and logged by the node) as ignored |
//!
//! `LOCALHOST` restricts the participant to the loopback interface: only `127.0.0.1` is used for
//! multicast and advertised as a locator, and same-host peers are found through the well-known
//! localhost discovery ports. `OFF` advertises no locator at all, so no other process can talk to
//! the node.
//!
//! ```
//! use rpq_ros::env::{DiscoveryRange, RosEnv};
//! let vars = |k: &str| match k {
//!     "ROS_DOMAIN_ID" => Some("42".to_string()),
//!     "ROS_LOCALHOST_ONLY" => Some("1".to_string()),
//!     _ => None,
//! };
//! let env = RosEnv::from_vars(vars).unwrap();
//! assert_eq!(env.domain_id, 42);
//! assert_eq!(env.discovery_range, DiscoveryRange::Localhost);
//! ```

use std::net::{IpAddr, Ipv4Addr};

use ros2_client::{dds::rustdds::DomainParticipantBuilder, Context, ServiceMapping};

/// Largest domain id whose RTPS port numbers still fit in 16 bits (the ROS 2 documented limit).
pub const MAX_DOMAIN_ID: u16 = 232;

/// Errors in the ROS environment variables, or in creating the DDS participant from them.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// `ROS_DOMAIN_ID` is not an integer in `0..=232`.
    #[error(
        "ROS_DOMAIN_ID={value:?} is not a domain id: expected an integer from 0 to {MAX_DOMAIN_ID}"
    )]
    BadDomainId {
        /// The offending value.
        value: String,
    },
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE` is not one of the four known ranges.
    #[error(
        "ROS_AUTOMATIC_DISCOVERY_RANGE={value:?} is not a discovery range: expected SUBNET, \
         LOCALHOST, OFF or SYSTEM_DEFAULT"
    )]
    BadDiscoveryRange {
        /// The offending value.
        value: String,
    },
    /// `ROS_LOCALHOST_ONLY` is neither `0` nor `1`.
    #[error("ROS_LOCALHOST_ONLY={value:?} is not valid: expected 0 or 1")]
    BadLocalhostOnly {
        /// The offending value.
        value: String,
    },
    /// `RMW_IMPLEMENTATION` names a middleware this crate cannot imitate.
    #[error(
        "RMW_IMPLEMENTATION={value:?} is not supported: use rmw_fastrtps_cpp (default) or \
         rmw_cyclonedds_cpp"
    )]
    UnsupportedRmw {
        /// The offending value.
        value: String,
    },
    /// RustDDS could not create the domain participant (sockets, ports).
    #[error("cannot create the DDS participant on domain {domain_id}: {reason}")]
    Participant {
        /// Domain that was asked for.
        domain_id: u16,
        /// What RustDDS said.
        reason: String,
    },
}

/// `ROS_AUTOMATIC_DISCOVERY_RANGE`: how far automatic discovery reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryRange {
    /// No discovery with other processes: the participant advertises no locator.
    Off,
    /// Same host only: loopback interface only.
    Localhost,
    /// Every interface (the default).
    Subnet,
}

/// The RMW whose wire conventions we follow, from `RMW_IMPLEMENTATION`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rmw {
    /// `rmw_fastrtps_cpp` (the Jazzy default, also chosen when the variable is unset).
    FastRtps,
    /// `rmw_cyclonedds_cpp`.
    CycloneDds,
}

impl Rmw {
    /// How service request ids are carried: Fast DDS uses the RPC-over-DDS "enhanced" mapping
    /// (sample identity in the inline QoS), Cyclone puts a 16-byte client-guid + sequence header
    /// in the payload.
    pub fn service_mapping(self) -> ServiceMapping {
        match self {
            Rmw::FastRtps => ServiceMapping::Enhanced,
            Rmw::CycloneDds => ServiceMapping::Cyclone,
        }
    }

    /// The `RMW_IMPLEMENTATION` value naming this RMW.
    pub fn name(self) -> &'static str {
        match self {
            Rmw::FastRtps => "rmw_fastrtps_cpp",
            Rmw::CycloneDds => "rmw_cyclonedds_cpp",
        }
    }
}

/// The ROS environment of a process: domain, discovery range and RMW conventions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosEnv {
    /// DDS domain id (`ROS_DOMAIN_ID`), `0..=232`.
    pub domain_id: u16,
    /// Discovery range after applying the legacy `ROS_LOCALHOST_ONLY`.
    pub discovery_range: DiscoveryRange,
    /// RMW conventions to follow (`RMW_IMPLEMENTATION`).
    pub rmw: Rmw,
    /// Remarks worth logging once at start-up (e.g. a variable that was overridden).
    pub notes: Vec<String>,
}

impl Default for RosEnv {
    /// Domain 0, subnet-wide discovery, Fast DDS conventions: what an empty environment means.
    fn default() -> Self {
        RosEnv {
            domain_id: 0,
            discovery_range: DiscoveryRange::Subnet,
            rmw: Rmw::FastRtps,
            notes: Vec::new(),
        }
    }
}

impl RosEnv {
    /// Reads the process environment. See [`RosEnv::from_vars`].
    pub fn from_env() -> Result<RosEnv, EnvError> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// Reads the variables through `get` (which returns `None` for an unset variable).
    ///
    /// Empty values count as unset, as in rcl. Surrounding whitespace is ignored.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<RosEnv, EnvError> {
        let var = |k: &str| {
            get(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let mut notes = Vec::new();

        let domain_id = match var("ROS_DOMAIN_ID") {
            None => 0,
            Some(v) => match v.parse::<u16>() {
                Ok(id) if id <= MAX_DOMAIN_ID => id,
                _ => return Err(EnvError::BadDomainId { value: v }),
            },
        };

        let range = match var("ROS_AUTOMATIC_DISCOVERY_RANGE") {
            None => None,
            Some(v) => Some(match v.as_str() {
                "SUBNET" | "SYSTEM_DEFAULT" => DiscoveryRange::Subnet,
                "LOCALHOST" => DiscoveryRange::Localhost,
                "OFF" => DiscoveryRange::Off,
                _ => return Err(EnvError::BadDiscoveryRange { value: v }),
            }),
        };
        let localhost_only = match var("ROS_LOCALHOST_ONLY").as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(other) => {
                return Err(EnvError::BadLocalhostOnly {
                    value: other.to_string(),
                })
            }
        };
        let discovery_range = if localhost_only {
            if range.is_some_and(|r| r != DiscoveryRange::Localhost) {
                notes.push(
                    "ROS_LOCALHOST_ONLY=1 is deprecated but still wins over \
                     ROS_AUTOMATIC_DISCOVERY_RANGE, as in ROS 2 Jazzy: discovery is LOCALHOST"
                        .to_string(),
                );
            }
            DiscoveryRange::Localhost
        } else {
            range.unwrap_or(DiscoveryRange::Subnet)
        };

        if let Some(peers) = var("ROS_STATIC_PEERS") {
            notes.push(format!(
                "ROS_STATIC_PEERS={peers:?} is ignored: this transport only discovers peers \
                 automatically"
            ));
        }

        let rmw = match var("RMW_IMPLEMENTATION").as_deref() {
            None | Some("rmw_fastrtps_cpp") => Rmw::FastRtps,
            Some("rmw_cyclonedds_cpp") => Rmw::CycloneDds,
            Some(other) => {
                return Err(EnvError::UnsupportedRmw {
                    value: other.to_string(),
                })
            }
        };

        Ok(RosEnv {
            domain_id,
            discovery_range,
            rmw,
            notes,
        })
    }

    /// Service mapping for clients and servers, from the RMW.
    pub fn service_mapping(&self) -> ServiceMapping {
        self.rmw.service_mapping()
    }

    /// True when discovery is restricted to this host.
    pub fn localhost_only(&self) -> bool {
        self.discovery_range == DiscoveryRange::Localhost
    }

    /// The interfaces the participant may use, `None` for all of them.
    pub fn allowed_interfaces(&self) -> Option<Vec<IpAddr>> {
        match self.discovery_range {
            DiscoveryRange::Subnet => None,
            DiscoveryRange::Localhost => Some(vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]),
            DiscoveryRange::Off => Some(Vec::new()),
        }
    }

    /// A RustDDS participant builder configured for this environment.
    pub fn participant_builder(&self) -> DomainParticipantBuilder {
        let builder = DomainParticipantBuilder::new(self.domain_id);
        match self.discovery_range {
            DiscoveryRange::Subnet => builder,
            DiscoveryRange::Localhost => builder.with_only_networks([Ipv4Addr::LOCALHOST]),
            DiscoveryRange::Off => builder
                .with_only_networks(Vec::<IpAddr>::new())
                .same_host_loopback(false),
        }
    }

    /// Creates the `ros2-client` context (one DDS participant) for this environment.
    ///
    /// This opens sockets: run it only where DDS traffic is allowed.
    pub fn context(&self) -> Result<Context, EnvError> {
        let fail = |e: &dyn std::fmt::Display| EnvError::Participant {
            domain_id: self.domain_id,
            reason: e.to_string(),
        };
        let participant = self.participant_builder().build().map_err(|e| fail(&e))?;
        Context::from_domain_participant(participant).map_err(|e| fail(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Result<RosEnv, EnvError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        RosEnv::from_vars(move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn empty_environment_is_domain_0_subnet_fastrtps() {
        let e = env(&[]).unwrap();
        assert_eq!(e, RosEnv::default());
        assert_eq!(e.service_mapping(), ServiceMapping::Enhanced);
        assert_eq!(e.allowed_interfaces(), None);
    }

    #[test]
    fn domain_id_bounds() {
        assert_eq!(env(&[("ROS_DOMAIN_ID", "232")]).unwrap().domain_id, 232);
        assert_eq!(env(&[("ROS_DOMAIN_ID", " 7 ")]).unwrap().domain_id, 7);
        assert_eq!(env(&[("ROS_DOMAIN_ID", "")]).unwrap().domain_id, 0);
        for bad in ["233", "-1", "abc", "1.5", "70000"] {
            let err = env(&[("ROS_DOMAIN_ID", bad)]).unwrap_err();
            assert!(matches!(err, EnvError::BadDomainId { ref value } if value == bad));
            assert!(err.to_string().contains("0 to 232"), "{err}");
        }
    }

    #[test]
    fn discovery_range_and_localhost_only() {
        let r = |pairs: &[(&str, &str)]| env(pairs).unwrap().discovery_range;
        assert_eq!(
            r(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")]),
            DiscoveryRange::Localhost
        );
        assert_eq!(
            r(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "SYSTEM_DEFAULT")]),
            DiscoveryRange::Subnet
        );
        assert_eq!(
            r(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")]),
            DiscoveryRange::Off
        );
        assert_eq!(r(&[("ROS_LOCALHOST_ONLY", "1")]), DiscoveryRange::Localhost);
        assert_eq!(r(&[("ROS_LOCALHOST_ONLY", "0")]), DiscoveryRange::Subnet);
        let e = env(&[
            ("ROS_LOCALHOST_ONLY", "1"),
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET"),
        ])
        .unwrap();
        assert_eq!(e.discovery_range, DiscoveryRange::Localhost);
        assert_eq!(e.notes.len(), 1);
        assert_eq!(
            e.allowed_interfaces(),
            Some(vec![IpAddr::V4(Ipv4Addr::LOCALHOST)])
        );
        assert!(matches!(
            env(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "localhost")]),
            Err(EnvError::BadDiscoveryRange { .. })
        ));
        assert_eq!(
            env(&[("ROS_STATIC_PEERS", "10.0.0.2")])
                .unwrap()
                .notes
                .len(),
            1
        );
        assert!(matches!(
            env(&[("ROS_LOCALHOST_ONLY", "yes")]),
            Err(EnvError::BadLocalhostOnly { .. })
        ));
    }

    #[test]
    fn rmw_selects_service_mapping() {
        let m = |v: &str| env(&[("RMW_IMPLEMENTATION", v)]).map(|e| e.service_mapping());
        assert_eq!(m("rmw_fastrtps_cpp").unwrap(), ServiceMapping::Enhanced);
        assert_eq!(m("rmw_cyclonedds_cpp").unwrap(), ServiceMapping::Cyclone);
        let err = m("rmw_zenoh_cpp").unwrap_err();
        assert!(err.to_string().contains("rmw_zenoh_cpp"), "{err}");
    }
}
