//! Service clients that survive the lost-first-reply race.
//!
//! Right after discovery a server may answer before its reply writer has matched our reply
//! reader; the reply is then lost (measured: 6 of 16 first calls, see `INTEROP.md`). The request
//! itself can be lost the same way. [`ServiceClient::call_with_retry`] bounds every try by a
//! timeout and sends the request again, which fixed every measured case.
//!
//! A retried request may reach the server twice, so use retries for requests whose repetition
//! is harmless (queries, `Trigger`-style commands that are idempotent) or accept at-least-once
//! semantics.

use std::{
    sync::atomic::{AtomicU32, Ordering},
    time::Duration,
};

use ros2_client::{Client, Message, Node};

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
        tokio::time::timeout(timeout, self.client.wait_for_service(node))
            .await
            .map_err(|_| ServiceError::NotAvailable {
                service: self.name.clone(),
                timeout,
            })
    }

    /// How many requests the last call sent (1 when the first reply arrived in time).
    pub fn last_tries(&self) -> u32 {
        self.last_tries.load(Ordering::Relaxed)
    }

    /// One try: sends `request` and waits up to `timeout` for its reply.
    pub async fn call(&self, request: Req, timeout: Duration) -> Result<Resp, ServiceError> {
        self.call_with_retry(request, timeout, 1).await
    }

    /// Sends `request` and waits up to `per_try_timeout` for the reply, sending it again up to
    /// `max_tries` times in all. A reply to an earlier try that arrives late is ignored.
    pub async fn call_with_retry(
        &self,
        request: Req,
        per_try_timeout: Duration,
        max_tries: u32,
    ) -> Result<Resp, ServiceError> {
        let transport = |reason: String| ServiceError::Transport {
            service: self.name.clone(),
            reason,
        };
        for attempt in 1..=max_tries {
            self.last_tries.store(attempt, Ordering::Relaxed);
            let id = self
                .client
                .async_send_request(request.clone())
                .await
                .map_err(|e| transport(format!("cannot send request: {e}")))?;
            match tokio::time::timeout(per_try_timeout, self.client.async_receive_response(id))
                .await
            {
                Ok(Ok(resp)) => return Ok(resp),
                Ok(Err(e)) => return Err(transport(format!("cannot read reply: {e}"))),
                Err(_elapsed) => continue,
            }
        }
        Err(ServiceError::NoReply {
            service: self.name.clone(),
            tries: max_tries,
            per_try: per_try_timeout,
        })
    }
}
