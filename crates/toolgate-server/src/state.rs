//! The service's state, shared by every request: the live gate and its
//! store, the `[server]` table's tokens and limits, the metrics, and what
//! the handlers cache or wait on.

use std::sync::Arc;
use std::time::Duration;

use toolgate::config::Config;
use toolgate_edge::config::{ServerConfig, ServerToken};
use toolgate_store::StoreGate;
use toolgate_store::{Clock, Store, Timestamp};

use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::{auth, live};

/// An answer read from the store, kept for a while (timed by tokio's clock,
/// which a test may pause and advance).
pub(crate) type Cached<T> = tokio::sync::Mutex<Option<(tokio::time::Instant, T)>>;

/// The service's state, shared by every request.
#[derive(Clone)]
pub struct AppState {
    pub(crate) inner: Arc<Inner>,
}

/// What [`AppState`] shares.
pub(crate) struct Inner {
    pub(crate) gate: live::LiveGate,
    /// The clock the service's records, refusal windows and notices are
    /// timed by: the gate's (a reload keeps it).
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) source: Option<live::Source>,
    pub(crate) reload_lock: tokio::sync::Mutex<()>,
    pub(crate) auth_failures: auth::FailureLimiter,
    /// The `[server]` table in force: its tokens and `metrics_auth` are
    /// swapped by a reload; the rest is what the service started with.
    pub(crate) server: std::sync::RwLock<Arc<ServerConfig>>,
    pub(crate) max_body_bytes: usize,
    /// The edge's limits (the listener's), from `[server]`.
    pub(crate) limits: toolgate_edge::Limits,
    pub(crate) body_timeout: Duration,
    pub(crate) metrics: Metrics,
    /// The gauges (pending approvals, kill switch mode) of the last scrape.
    pub(crate) gauges: Cached<crate::metrics::Gauges>,
    /// The `[[limit]]` gauges of the last scrape.
    pub(crate) limit_gauges: Cached<Vec<crate::metrics::LimitGauge>>,
    /// The last readiness probe: `Err` holds the store's error code.
    pub(crate) ready: Cached<Result<(), &'static str>>,
    /// Woken when an approval is decided (here, or pushed by the store
    /// from another replica).
    pub(crate) decided: tokio::sync::Notify,
    /// How often a wait re-reads the store (`[server] store_poll_ms`).
    pub(crate) store_poll: Duration,
    /// Set when the store pushes a kill switch flip: the next scrape reads
    /// the gauges afresh.
    pub(crate) gauges_stale: std::sync::atomic::AtomicBool,
    /// Set when [`serve`](crate::serve) begins its graceful shutdown: waits
    /// end early.
    pub(crate) stopping: std::sync::atomic::AtomicBool,
    /// Signed checkpoints of the audit chain (`[store] checkpoint_*`):
    /// the key, the sink and how often.
    pub(crate) checkpoints: Option<Checkpoints>,
    /// The notification sinks (`[[approvals.notify]]`), if any.
    pub(crate) notify: Option<Arc<crate::notify::Settings>>,
    /// Woken when a call is held here: the notices go out.
    pub(crate) held: tokio::sync::Notify,
    /// Notices dropped because the queue was full.
    pub(crate) notices_dropped: std::sync::atomic::AtomicU64,
    /// Notices this process claimed and has not finished: waiting in the
    /// queue or being delivered.
    pub(crate) notices_pending: std::sync::atomic::AtomicU64,
    /// How many notices this process has settled (recorded `delivered` or
    /// `failed`), for whoever waits on them.
    pub(crate) notices_settled: tokio::sync::watch::Sender<u64>,
    /// How many notices this process has claimed (each then queued or
    /// dropped), for whoever waits on them.
    pub(crate) notices_claimed: tokio::sync::watch::Sender<u64>,
    /// How many waits on an approval have found it pending and begun to
    /// wait for a decision, for whoever must decide only once one waits.
    pub(crate) approval_waits: tokio::sync::watch::Sender<u64>,
    /// How many checkpoints [`serve`](crate::serve) has tried to write
    /// (written, or reported as failed).
    pub(crate) checkpoint_tries: tokio::sync::watch::Sender<u64>,
    /// JWT bearer tokens (`[jwt]`), once started ([`AppState::start_jwt`]).
    pub(crate) jwt: std::sync::OnceLock<toolgate_edge::jwt::Verifier>,
    /// `[login]`: the approvals page's login through a trusted reverse
    /// proxy.
    pub(crate) login: Option<toolgate_edge::config::LoginConfig>,
    /// `[oidc]`'s authorization and token endpoints, as configured or
    /// read from the issuer's discovery document ([`AppState::start_jwt`]).
    pub(crate) oidc_endpoints: std::sync::OnceLock<(String, String)>,
    /// `[oidc]`: the approvals page's OpenID Connect login.
    pub(crate) oidc: Option<toolgate_edge::config::OidcConfig>,
    /// Traces, OTLP metrics and the decision log ([`AppState::with_telemetry`]).
    pub(crate) telemetry: std::sync::OnceLock<toolgate_telemetry::Telemetry>,
}

/// The telemetry of a service given none.
static NO_TELEMETRY: toolgate_telemetry::Telemetry = toolgate_telemetry::Telemetry::off();

impl Inner {
    /// The service's telemetry (off until [`AppState::with_telemetry`]).
    pub(crate) fn telemetry(&self) -> &toolgate_telemetry::Telemetry {
        self.telemetry.get().unwrap_or(&NO_TELEMETRY)
    }
}

/// What [`serve`](crate::serve) writes signed checkpoints with.
pub(crate) struct Checkpoints {
    pub(crate) key: Arc<toolgate_store::CheckpointKey>,
    pub(crate) sink: std::path::PathBuf,
    pub(crate) every: Duration,
}

/// Why the service could not be built from a config.
pub type BuildError = Box<dyn std::error::Error + Send + Sync>;

impl AppState {
    /// The state over a store gate, with the `[server]` table's tokens and
    /// body cap.
    pub fn new(gate: StoreGate, server: &ServerConfig) -> Self {
        Self::unsubscribed(gate, server).subscribed()
    }

    /// The service recording each decide request as a span (inside the
    /// caller's trace), each decision as its child, in the OTLP metrics and
    /// the decision log; set once.
    #[must_use]
    pub fn with_telemetry(self, telemetry: toolgate_telemetry::Telemetry) -> Self {
        telemetry.observe_store(self.store());
        let _ = self.inner.telemetry.set(telemetry);
        self
    }

    /// [`AppState::new`] before it hears the store's pushes (while its
    /// state is still its own to fill in).
    fn unsubscribed(gate: StoreGate, server: &ServerConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                clock: gate.clock(),
                gate: live::LiveGate::new(gate),
                source: None,
                reload_lock: tokio::sync::Mutex::new(()),
                auth_failures: auth::FailureLimiter::default(),
                server: std::sync::RwLock::new(Arc::new(server.clone())),
                max_body_bytes: server.max_body_bytes(),
                limits: toolgate_edge::Limits::from_server(server),
                body_timeout: server.body_timeout(),
                metrics: Metrics::default(),
                gauges: tokio::sync::Mutex::new(None),
                limit_gauges: tokio::sync::Mutex::new(None),
                ready: tokio::sync::Mutex::new(None),
                decided: tokio::sync::Notify::new(),
                store_poll: server.store_poll(),
                gauges_stale: std::sync::atomic::AtomicBool::new(false),
                stopping: std::sync::atomic::AtomicBool::new(false),
                checkpoints: None,
                notify: None,
                held: tokio::sync::Notify::new(),
                notices_dropped: std::sync::atomic::AtomicU64::new(0),
                notices_pending: std::sync::atomic::AtomicU64::new(0),
                notices_settled: tokio::sync::watch::Sender::new(0),
                notices_claimed: tokio::sync::watch::Sender::new(0),
                approval_waits: tokio::sync::watch::Sender::new(0),
                checkpoint_tries: tokio::sync::watch::Sender::new(0),
                jwt: std::sync::OnceLock::new(),
                login: None,
                oidc: None,
                oidc_endpoints: std::sync::OnceLock::new(),
                telemetry: std::sync::OnceLock::new(),
            }),
        }
    }

    /// Hears the changes the store pushes (see [`Store::subscribe`]): a
    /// decided approval wakes the waits, a kill switch flip makes the
    /// gauges stale. The store holds the state weakly: it does not keep
    /// the service alive.
    fn subscribed(self) -> Self {
        let weak = Arc::downgrade(&self.inner);
        let listener: toolgate_store::ChangeListener =
            Arc::new(move |change: &toolgate_store::Change| {
                let Some(inner) = weak.upgrade() else {
                    return false;
                };
                let wake = !matches!(change, toolgate_store::Change::KillSwitch);
                let stale = !matches!(change, toolgate_store::Change::ApprovalDecided(_));
                if wake {
                    inner.decided.notify_waiters();
                }
                if stale {
                    inner
                        .gauges_stale
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                }
                true
            });
        self.store().subscribe(listener);
        self
    }

    /// The state as `toolgate check` builds its gate: the config's tools,
    /// limits, authorization and store (opened, created if needed).
    /// `POST /v1/reload` re-reads the config's file ([`Config::path`]).
    pub fn from_config(config: &Config) -> Result<Self, BuildError> {
        Self::from_config_on(config, Arc::new(toolgate_store::SystemClock::new()))
    }

    /// [`AppState::from_config`] with every "now" of the service, its gate
    /// and its store taken from `clock` (a `ManualClock` in tests: approvals
    /// expire, refusal windows pass and notices are timed when the test
    /// moves it).
    pub fn from_config_on(config: &Config, clock: Arc<dyn Clock>) -> Result<Self, BuildError> {
        let gate = live::gate_from_config(config)?;
        let store = toolgate_store::open_config_store(
            config,
            toolgate_store::StoreOptions::new().clock(Arc::clone(&clock)),
        )?;
        let gate = StoreGate::new(gate, store)
            .configured(config)
            .with_clock(clock);
        let server = ServerConfig::from_config(config)?;
        let identity = live::Identity::of(config)?;
        let mut state = Self::unsubscribed(gate, &server);
        if let Some(inner) = Arc::get_mut(&mut state.inner) {
            inner.source = Some(live::Source {
                path: config.path().to_path_buf(),
                store_url: config.store().url().to_owned(),
                escalate_after: config.gate().escalate_after(),
                checkpoint: config.store().checkpoint().cloned(),
                identity: identity.clone(),
            });
            let approvals = config.approvals();
            if !approvals.notify().is_empty() {
                inner.notify = Some(Arc::new(crate::notify::Settings {
                    sinks: approvals.notify().to_vec(),
                    page_url: approvals.page_url().map(str::to_owned),
                }));
            }
            inner.login = identity.login;
            inner.oidc = identity.oidc;
            // A key that cannot be read stops the start, not the checkpoints.
            if let Some(c) = config.store().checkpoint() {
                inner.checkpoints = Some(Checkpoints {
                    key: Arc::new(toolgate_store::CheckpointKey::from_file(c.key())?),
                    sink: c.sink().to_path_buf(),
                    every: c.every(),
                });
            }
        }
        Ok(state.subscribed())
    }

    /// Starts accepting JWT bearer tokens as `config`'s `[jwt]` says (its
    /// keys read, or fetched, now; a later reload leaves them as started),
    /// and with `[oidc]` naming no endpoints reads them from the issuer's
    /// discovery document (a document that cannot be read, or names
    /// another issuer, stops the start). Without `[jwt]`, nothing changes.
    pub async fn start_jwt(&self, config: &Config) -> Result<(), BuildError> {
        if let Some(v) = toolgate_edge::jwt::Verifier::from_config(config).await? {
            // Started once: a second call keeps the first verifier.
            let _ = self.inner.jwt.set(v);
        }
        let identity = live::Identity::of(config)?;
        if let (Some(oidc), Some(jwt)) = (identity.oidc, identity.jwt) {
            let endpoints = match oidc.endpoints() {
                Some((a, t)) => (a.to_owned(), t.to_owned()),
                None => crate::ui::oidc::discover(jwt.issuer()).await?,
            };
            let _ = self.inner.oidc_endpoints.set(endpoints);
        }
        Ok(())
    }

    /// The `[server]` table in force: the tokens (with their roles and
    /// users) and `metrics_auth` as last reloaded, the rest as started.
    pub fn server(&self) -> Arc<ServerConfig> {
        Arc::clone(
            &self
                .inner
                .server
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The configured tokens, as last reloaded.
    pub fn tokens(&self) -> Vec<ServerToken> {
        self.server().tokens().to_vec()
    }

    /// Puts a reloaded `[server]` table in force (tokens, `metrics_auth`).
    pub(crate) fn set_server(&self, server: ServerConfig) {
        *self
            .inner
            .server
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(server);
    }

    /// The request body cap.
    pub fn max_body_bytes(&self) -> usize {
        self.inner.max_body_bytes
    }

    /// How long a request's body may take to arrive.
    pub fn body_timeout(&self) -> Duration {
        self.inner.body_timeout
    }

    /// The store behind the live gate.
    pub(crate) fn store(&self) -> Arc<dyn Store> {
        Arc::clone(self.inner.gate.store())
    }

    /// Runs `f` on the store on a blocking thread.
    pub(crate) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T, toolgate_store::Error> + Send + 'static,
    ) -> Result<T, ApiError> {
        let store = self.store();
        let started = std::time::Instant::now();
        let answer = tokio::task::spawn_blocking(move || f(store.as_ref())).await;
        self.inner.metrics.store_call(started.elapsed());
        answer
            .map_err(|_| ApiError::store_unavailable("the store call did not finish"))?
            .map_err(ApiError::from)
    }
}

impl AppState {
    /// The time now, by the service's clock (the gate's).
    pub(crate) fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    /// How many notices of held calls this process has settled (each
    /// recorded `delivered` or `failed`, see [`crate::notify`]), as it
    /// changes: wait on it instead of polling the store.
    pub fn notices_settled(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.notices_settled.subscribe()
    }

    /// How many notices of held calls this process has claimed (each then
    /// queued for delivery or dropped because the queue was full), as it
    /// changes: wait on it instead of polling `/metrics`.
    pub fn notices_claimed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.notices_claimed.subscribe()
    }

    /// How many waits (`GET /v1/approvals/{id}/wait`) have found their
    /// approval pending and begun to wait for its decision, as it changes:
    /// a test decides once a waiter waits instead of sleeping first.
    pub fn approval_waits(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.approval_waits.subscribe()
    }

    /// How many signed checkpoints the service has tried to write (each
    /// then in the sink and the log, or reported as failed), as it changes.
    pub fn checkpoint_tries(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.checkpoint_tries.subscribe()
    }
}
