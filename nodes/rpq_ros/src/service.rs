//! Service clients that survive the lost-first-reply race.
//!
//! Right after discovery a server may answer before its reply writer has matched our reply
//! reader; the reply is then lost (measured: 6 of 16 first calls, see `INTEROP.md`). The request
//! itself can be lost the same way. [`ServiceClient::call_with_retry`] bounds every try by a
//! timeout and sends the request again, which fixed every measured case.
//!
//! A retried request may reach the server more than once (at-least-once delivery); see
//! [`ServiceClient::call_with_retry`].

use std::{
    sync::atomic::{AtomicU32, Ordering},
    time::Duration,
};

use ros2_client::{Client, Message, Node};

/// Largest service reply [B] a server should send on a loopback network: one UDP datagram (64 kB)
/// with room for the headers.
///
/// A larger reply is sent as RTPS fragments, and rustdds 0.15.1 writes a fragment that carries
/// inline QoS with one extra byte (its `DataFrag` serializes the `Option<ParameterList>`, tag
/// included, where `Data` writes the list). A service reply always carries inline QoS (the
/// request's sample identity), so a fragmented reply reaches no client, rclpy on Fast DDS
/// included: the client waits until its timeout. Servers whose reply can grow with the request
/// refuse, or trim, what would not fit. Across an Ethernet link (MTU 1500) rustdds already
/// fragments above 1,452 bytes.
pub const MAX_REPLY_BYTES: usize = 60_000;

/// The size of `reply` on the wire [B] (CDR with its encapsulation header; `usize::MAX` when it
/// cannot be encoded): a server compares it with [`MAX_REPLY_BYTES`] before sending.
pub fn reply_bytes<T: serde::Serialize>(reply: &T) -> usize {
    crate::cdr::to_vec(reply).map_or(usize::MAX, |v| v.len())
}

/// Errors of a service call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ServiceError {
    /// No server appeared in time.
    #[error("service {service}: no server appeared within {timeout:?}")]
    NotAvailable {
        /// Service name.
        service: String,
        /// How long we waited.
        timeout: Duration,
    },
    /// No reply after every try.
    #[error("service {service}: no reply after {tries} tries of {per_try:?} each")]
    NoReply {
        /// Service name.
        service: String,
        /// Tries made.
        tries: u32,
        /// Timeout of each try.
        per_try: Duration,
    },
    /// Writing the request or reading the reply failed in DDS.
    #[error("service {service}: {reason}")]
    Transport {
        /// Service name.
        service: String,
        /// What DDS said.
        reason: String,
    },
}

/// A typed service client bound to a fully qualified service name.
pub struct ServiceClient<Req: Message, Resp: Message> {
    pub(crate) client: Client<Req, Resp>,
    pub(crate) name: String,
    pub(crate) last_tries: AtomicU32,
}

impl<Req, Resp> ServiceClient<Req, Resp>
where
    Req: Message + Clone + 'static,
    Resp: Message + 'static,
{
    /// The fully qualified service name (after remapping).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The underlying `ros2-client` client.
    pub fn inner(&self) -> &Client<Req, Resp> {
        &self.client
    }

    /// Waits until a server's request reader and reply writer are matched with ours.
    ///
    /// `node` must be the node that created this client, with its spinner running (a
    /// [`RosNode`](crate::node::RosNode) always runs one).
    pub async fn wait_for_service(
        &self,
        node: &Node,
        timeout: Duration,
    ) -> Result<(), ServiceError> {
        if wait_in_slices(timeout, || self.client.wait_for_service(node)).await {
            Ok(())
        } else {
            Err(ServiceError::NotAvailable {
                service: self.name.clone(),
                timeout,
            })
        }
    }

    /// How many requests the last call sent (1 when the first reply arrived in time).
    pub fn last_tries(&self) -> u32 {
        self.last_tries.load(Ordering::Relaxed)
    }

    /// One try: sends `request` and waits up to `timeout` for its reply.
    pub async fn call(&self, request: Req, timeout: Duration) -> Result<Resp, ServiceError> {
        self.call_with_retry(request, timeout, 1).await
    }

    /// Sends `request` and waits up to `per_try_timeout` for a reply, sending it again up to
    /// `max_tries` times in all.
    ///
    /// Every request sent by this call stays pending until the call ends: the first reply to
    /// *any* of them is returned, so a server slower than `per_try_timeout` still answers (its
    /// reply to try 1 may arrive during try 3). The call gives up with
    /// [`ServiceError::NoReply`] `max_tries × per_try_timeout` after the first send. A reply that
    /// cannot be decoded is logged and skipped; replies to other calls are skipped.
    ///
    /// **At-least-once:** a retry sends the same request again, and the server may well have
    /// received and executed the earlier one (its reply was merely late or lost). With
    /// `max_tries > 1` the server may therefore run the request up to `max_tries` times. Retry only
    /// requests whose repetition is harmless (queries, idempotent commands), or use
    /// `max_tries = 1` ([`call`](Self::call)) for side effects that must not repeat.
    pub async fn call_with_retry(
        &self,
        request: Req,
        per_try_timeout: Duration,
        max_tries: u32,
    ) -> Result<Resp, ServiceError> {
        // ros2-client's `async_receive_response(id)` waits for the reply without polling but
        // drops replies to every other id. It is used for the first try, when no other request
        // of this call exists; after a retry the reader is polled, so that a late reply to any
        // earlier try is still taken.
        const POLL: Duration = Duration::from_millis(2);
        let transport = |reason: String| ServiceError::Transport {
            service: self.name.clone(),
            reason,
        };
        let mut sent = Vec::with_capacity(max_tries.min(16) as usize);
        for attempt in 1..=max_tries {
            self.last_tries.store(attempt, Ordering::Relaxed);
            let id = self
                .client
                .async_send_request(request.clone())
                .await
                .map_err(|e| transport(format!("cannot send request: {e}")))?;
            sent.push(id);
            let try_deadline = tokio::time::Instant::now() + per_try_timeout;
            if attempt == 1 {
                match tokio::time::timeout_at(try_deadline, self.client.async_receive_response(id))
                    .await
                {
                    Ok(Ok(resp)) => return Ok(resp),
                    // an undecodable reply: go on polling for the rest of this try
                    Ok(Err(e)) => {
                        log::warn!("service {}: skipped undecodable reply: {e}", self.name)
                    }
                    Err(_) => continue,
                }
            }
            loop {
                match self.client.receive_response() {
                    Ok(Some((id, resp))) if sent.contains(&id) => return Ok(resp),
                    Ok(Some((id, _))) => {
                        log::debug!(
                            "service {}: skipped reply to another call {id:?}",
                            self.name
                        );
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => log::warn!("service {}: skipped undecodable reply: {e}", self.name),
                }
                let now = tokio::time::Instant::now();
                if now >= try_deadline {
                    break;
                }
                tokio::time::sleep(POLL.min(try_deadline - now)).await;
            }
        }
        Err(ServiceError::NoReply {
            service: self.name.clone(),
            tries: max_tries,
            per_try: per_try_timeout,
        })
    }
}

/// How often a wait for a match re-reads the match state.
const MATCH_RECHECK_PERIOD: Duration = Duration::from_millis(200);

/// Runs `wait()` in slices of [`MATCH_RECHECK_PERIOD`] until it resolves or `timeout` passes;
/// returns whether it resolved. ros2-client's match waits (service, subscriber, publisher) resolve on
/// a graph event that follows the match; that event can be lost (its channel is bounded, and a
/// remote entity is announced once), and then a single wait never resolves although the match
/// exists. Each new wait re-reads the match state first, so a match whose event was lost is seen.
pub(crate) async fn wait_in_slices<F: std::future::Future<Output = ()>>(
    timeout: Duration,
    mut wait: impl FnMut() -> F,
) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return false;
        }
        let slice = (deadline - now).min(MATCH_RECHECK_PERIOD);
        if tokio::time::timeout(slice, wait()).await.is_ok() {
            return true;
        }
    }
}
