//! `errata mcp`: the knowledge base as a Model Context Protocol server on stdio, for
//! assistants. A thin layer over `errata-consumer` (matching, entries) and
//! `errata-search` (full-text search over the bundle's SQLite database).
//!
//! Tools: `match_error(text, lang?)` (the known errors in a message or log, with what not
//! to try and what to try), `get_entry(id)` (one entry, whole), `search(query, lang?,
//! limit?)` (entries and articles), `decode(value, family?)` (every family's meaning of a
//! bare number or name), `incidents(logs, window_minutes?)` (the known errors of several
//! logs grouped into incidents, each with its first cause and operator action),
//! `audit(report, lang?)` (known-bad environments in collect_env / nvidia-smi / nvcc /
//! pip output), `report_outcome(entry, item, outcome,
//! reporter, env?, source?, date?)` (what happened when the user tried a dead end or a
//! workaround, appended to `<--outcomes DIR>/<domain>/<slug>.jsonl`, a file to submit in
//! a pull request as `data/outcomes/…`). Resources: every entry, as
//! `errata://entry/<id>` (JSON). Bad arguments are JSON-RPC errors (invalid params),
//! never a crash.
//!
//! The answers come from a verified bundle: `--bundle PATH`, or one written from the
//! data directory into a temporary directory at start-up (refused when the data has
//! errors, like `errata bundle`). Standard output carries the protocol only; messages go
//! to standard error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use errata_consumer::{Bundle, DATABASE, Lang};
use errata_search::SearchIndex;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_handler,
    tool_router,
};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub knowledge: super::common::KnowledgeArgs,
    /// Where `report_outcome` writes its records (`<DIR>/<domain>/<slug>.jsonl`, the
    /// layout of `data/outcomes/`).
    #[arg(long, value_name = "DIR", default_value = "errata-outcomes")]
    pub outcomes: PathBuf,
}

/// The most hits `search` returns, whatever `limit` asks.
const MAX_LIMIT: u32 = 50;
/// The most text `match_error` scans (a pasted log, not a file system).
const MAX_TEXT_BYTES: usize = 16 << 20;
/// The URI prefix of entry resources.
const ENTRY_URI: &str = "errata://entry/";

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (bundle, _scratch) = match args.knowledge.bundle {
        Some(path) => (
            Bundle::open_keeping(&path, &[DATABASE])
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
            None,
        ),
        None => {
            let scratch = tempfile::tempdir().context("cannot create a temporary directory")?;
            let Some(path) = super::bundle::write_checked(args.knowledge.data, scratch.path())?
            else {
                return Ok(ExitCode::from(1));
            };
            let bundle = Bundle::open_keeping(&path, &[DATABASE])
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            (bundle, Some(scratch))
        }
    };
    let database = bundle
        .member(DATABASE)
        .context("the bundle has no database")?;
    let search = SearchIndex::from_bytes(database).map_err(|e| anyhow::anyhow!("{e}"))?;
    eprintln!(
        "errata mcp: {} entries (bundle {}), on stdio",
        bundle.entries().len(),
        bundle.manifest().version
    );
    let server = Server::new(Arc::new(bundle), Arc::new(search), args.outcomes);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("MCP handshake failed: {e}"))?;
        service
            .waiting()
            .await
            .map_err(|e| anyhow::anyhow!("MCP server stopped: {e}"))?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `match_error`'s arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct MatchArgs {
    /// The error message or log text, one or many lines.
    pub text: String,
    /// Language of the advice: `en` (default) or `zh`.
    pub lang: Option<String>,
}

/// `get_entry`'s arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct EntryArgs {
    /// The entry id, `<domain>/<slug>` (e.g. `cuda/illegal-memory-access`).
    pub id: String,
}

/// `search`'s arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for in entries and articles.
    pub query: String,
    /// `en` (default) or `zh`: which text is searched.
    pub lang: Option<String>,
    /// How many results (default 10, at most 50).
    pub limit: Option<u32>,
}

/// `decode`'s arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct DecodeArgs {
    /// A bare number (`700`, `0x2bc`) or an enumerator name (`CUBLAS_STATUS_NOT_SUPPORTED`).
    pub value: String,
    /// Only this family: `cuda`, `cu`, `cublas`, `cudnn`, `nccl`, `cufft`, `cusolver`,
    /// `cusparse`, `curand`, `nvml`, `xid` (or a type name such as `cublasStatus_t`).
    pub family: Option<String>,
}

/// One log given to `incidents`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct LogArg {
    /// The log's name as it should be shown (`kern.log`, `rank3.log`: a name with a rank
    /// in it gives its lines that rank).
    pub name: String,
    /// The log's text.
    pub text: String,
}

/// `incidents`' arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct IncidentsArgs {
    /// The logs of one failure: rank logs, kernel logs (`dmesg -T`, journal, syslog),
    /// NCCL debug logs.
    pub logs: Vec<LogArg>,
    /// The longest gap between two errors of one incident, in minutes (default 30).
    pub window_minutes: Option<f64>,
}

/// `audit`'s arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AuditArgs {
    /// Environment reports: the output of `python -m torch.utils.collect_env`,
    /// `nvidia-smi`, `nvidia-smi -q`, `nvcc --version`, `pip list`, in any mix.
    pub report: String,
    /// `en` (default) or `zh`: the language of notes and fixes.
    pub lang: Option<String>,
}

/// At most this many incidents, and members per incident, in one `incidents` answer.
const MAX_INCIDENTS: usize = 20;
const MAX_MEMBERS: usize = 30;

/// `report_outcome`'s arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct OutcomeArgs {
    /// The entry id, `<domain>/<slug>` (as returned by match_error).
    pub entry: String,
    /// `dead_end:<i>` or `workaround:<i>`: 0-based, in the order get_entry lists them.
    pub item: String,
    /// `worked` (it fixed the error) or `failed`.
    pub outcome: String,
    /// Who reports it (`github:<login>`, a name, an e-mail).
    pub reporter: String,
    /// The machine: gpu, driver, cuda, torch (all optional).
    pub env: Option<OutcomeEnv>,
    /// A public https page that shows it.
    pub source: Option<String>,
    /// YYYY-MM-DD (default: today).
    pub date: Option<String>,
}

/// The machine an outcome was seen on.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct OutcomeEnv {
    /// e.g. `NVIDIA H200`.
    pub gpu: Option<String>,
    /// e.g. `580.159.04`.
    pub driver: Option<String>,
    /// e.g. `13.0`.
    pub cuda: Option<String>,
    /// e.g. `2.11.0`.
    pub torch: Option<String>,
}

#[derive(Clone)]
struct Server {
    bundle: Arc<Bundle>,
    search: Arc<SearchIndex>,
    outcomes: Arc<PathBuf>,
    /// The tools, routed by name: built once, not at every call.
    router: Arc<rmcp::handler::server::router::tool::ToolRouter<Server>>,
}

fn lang_of(code: Option<&str>) -> Result<Lang, McpError> {
    match code {
        None | Some("en") => Ok(Lang::En),
        Some("zh") => Ok(Lang::Zh),
        Some(other) => Err(McpError::invalid_params(
            format!("lang must be `en` or `zh`, not `{other}`"),
            None,
        )),
    }
}

fn json_result(value: &serde_json::Value) -> Result<CallToolResult, McpError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

#[tool_router]
impl Server {
    fn new(bundle: Arc<Bundle>, search: Arc<SearchIndex>, outcomes: PathBuf) -> Server {
        Server {
            bundle,
            search,
            outcomes: Arc::new(outcomes),
            router: Arc::new(Self::tool_router()),
        }
    }

    #[tool(
        description = "Record what happened when the user tried one of an entry's dead ends or workarounds (`item`: `dead_end:<i>` or `workaround:<i>`, 0-based in the order get_entry lists them; `outcome`: `worked` or `failed`). The record is validated against the entry and appended to a local file the user can submit in a pull request; the knowledge base then counts it in that item's rate. Ask the user before recording, and record only what they say happened.",
        annotations(
            title = "Record an outcome",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn report_outcome(
        &self,
        Parameters(args): Parameters<OutcomeArgs>,
    ) -> Result<CallToolResult, McpError> {
        let entry = self.bundle.entry(args.entry.trim()).ok_or_else(|| {
            McpError::invalid_params(format!("no entry has the id `{}`", args.entry), None)
        })?;
        let shape = errata_outcomes::Shape {
            dead_ends: entry.dead_ends().len(),
            workarounds: entry.workarounds().len(),
        };
        let env = args.env.map(|e| errata_outcomes::Env {
            gpu: e.gpu,
            driver: e.driver,
            cuda: e.cuda,
            torch: e.torch,
        });
        let today = errata_model::date::Date::today();
        let record = errata_outcomes::OutcomeRecord {
            entry: entry.id.clone(),
            item: args.item,
            outcome: args.outcome,
            date: args.date.unwrap_or_else(|| today.to_string()),
            env,
            source: args.source,
            reporter: args.reporter,
        };
        let path = errata_outcomes::record(&self.outcomes, &record, Some(shape), today)
            .map_err(|why| McpError::invalid_params(why, None))?;
        json_result(&serde_json::json!({
            "written": path.display().to_string(),
            "record": record,
            "next": "submit the lines in a pull request, appended to data/outcomes/<domain>/<slug>.jsonl; errata check validates them and the build adds them to the item's count"
        }))
    }

    #[tool(
        description = "Recognise known GPU/CUDA errors in an error message or log (PyTorch, CUDA runtime, cuBLAS, cuDNN, NCCL, JAX/TensorFlow, vLLM, llama.cpp, driver, compute-sanitizer, Xid, bare status numbers). Returns `results`: one per known error, in order of first appearance, with the lines it was seen on, its root cause, what people try that does not help (dead ends) and what helps (workarounds, with `how`); a rate is a number only when it was counted, else `evidence` says it in words. At most 10 errors and about 32 KiB: `left_out` says what was not described. Empty `results` means no known error.",
        annotations(
            title = "Match GPU errors in a log",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn match_error(
        &self,
        Parameters(args): Parameters<MatchArgs>,
    ) -> Result<CallToolResult, McpError> {
        let lang = lang_of(args.lang.as_deref())?;
        if args.text.len() > MAX_TEXT_BYTES {
            return Err(McpError::invalid_params(
                format!(
                    "text is {} bytes; at most {MAX_TEXT_BYTES}",
                    args.text.len()
                ),
                None,
            ));
        }
        // One result per known error with the lines it was seen on, bounded in count
        // and bytes (an assistant's context is small; a log is not).
        let found = self.bundle.match_text(&args.text);
        let limits = errata_consumer::summary::Limits::default();
        json_result(&errata_consumer::summary::summary(&found, lang, &limits))
    }

    #[tool(
        description = "Group the known errors of several logs of one failure (per-rank training logs, kernel logs from dmesg -T / journalctl / syslog, NCCL debug logs) into incidents by time, GPU (PCI bus id) and the knowledge base's transition graph, and name each incident's first cause and the operator's action (fix-code, fix-config, fix-environment, restart-process, reset-gpu, reboot-node, drain-and-inspect, replace-hardware, none). `ordered_by` is `graph` when times were missing or relative to boot. At most 20 incidents and 30 members each; `left_out` counts the rest.",
        annotations(
            title = "Incidents across logs",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn incidents(
        &self,
        Parameters(args): Parameters<IncidentsArgs>,
    ) -> Result<CallToolResult, McpError> {
        let total: usize = args.logs.iter().map(|l| l.text.len() + l.name.len()).sum();
        if total > MAX_TEXT_BYTES {
            return Err(McpError::invalid_params(
                format!("logs are {total} bytes; at most {MAX_TEXT_BYTES}"),
                None,
            ));
        }
        let window = args.window_minutes.unwrap_or(30.0);
        if !(window.is_finite() && window >= 0.0) {
            return Err(McpError::invalid_params(
                format!("window_minutes must be a number ≥ 0, not {window}"),
                None,
            ));
        }
        let logs: Vec<errata_incidents::Log<'_>> = args
            .logs
            .iter()
            .map(|l| errata_incidents::Log {
                name: &l.name,
                text: &l.text,
            })
            .collect();
        let options = errata_incidents::Options {
            window_secs: window * 60.0,
        };
        let found = errata_incidents::find(self.bundle.index(), &logs, &options);
        let incidents: Vec<serde_json::Value> = found
            .iter()
            .take(MAX_INCIDENTS)
            .map(|i| {
                let mut v = i.to_json();
                if let Some(members) = v.get_mut("members").and_then(|m| m.as_array_mut())
                    && members.len() > MAX_MEMBERS
                {
                    let more = members.len() - MAX_MEMBERS;
                    members.truncate(MAX_MEMBERS);
                    v["members_left_out"] = more.into();
                }
                v
            })
            .collect();
        json_result(&serde_json::json!({
            "incidents": incidents,
            "left_out": found.len().saturating_sub(MAX_INCIDENTS),
        }))
    }

    #[tool(
        description = "Known-bad GPU environments before anything crashes: give the output of `python -m torch.utils.collect_env`, `nvidia-smi`, `nvidia-smi -q`, `nvcc --version` or `pip list` (any mix). Returns the facts read (driver, torch and its CUDA build, GPUs and compute capabilities, cuDNN, NCCL, …) and `findings`: each knowledge-base entry the environment is known to produce (a driver too old for torch's CUDA, a GPU the torch build has no kernels for, a CPU-only torch on a GPU machine), with the facts that triggered it and the fix. Empty `findings` means nothing known is wrong.",
        annotations(
            title = "Audit a GPU environment",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn audit(
        &self,
        Parameters(args): Parameters<AuditArgs>,
    ) -> Result<CallToolResult, McpError> {
        let lang = lang_of(args.lang.as_deref())?;
        if args.report.len() > MAX_TEXT_BYTES {
            return Err(McpError::invalid_params(
                format!(
                    "report is {} bytes; at most {MAX_TEXT_BYTES}",
                    args.report.len()
                ),
                None,
            ));
        }
        let report =
            errata_audit::audit(&args.report, self.bundle.index(), matches!(lang, Lang::Zh));
        let value = serde_json::to_value(&report)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        json_result(&value)
    }

    #[tool(
        description = "What a bare GPU error number or enumerator name means in every family that has it (cudaError_t, CUresult, cuBLAS, cuDNN, NCCL, cuFFT, cuSOLVER, cuSPARSE, cuRAND, NVML, Xid), from NVIDIA's own tables, with the knowledge-base entry id where one exists. A number is never assigned to one family by guess: pass `family` when the log names the library.",
        annotations(
            title = "Decode a GPU error number",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn decode(
        &self,
        Parameters(args): Parameters<DecodeArgs>,
    ) -> Result<CallToolResult, McpError> {
        let decoded = errata_decode::decode(
            &args.value,
            args.family.as_deref(),
            self.bundle.index().entries(),
        )
        .map_err(|e| McpError::invalid_params(e.to_string(), None))?;
        let value = serde_json::to_value(&decoded)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        json_result(&value)
    }

    #[tool(
        description = "The whole knowledge-base entry with this id (`<domain>/<slug>`, as returned by match_error or search): signature, regex, root cause, dead ends, workarounds, English and Chinese text, sources, transition graph, versions.",
        annotations(title = "Get an entry", read_only_hint = true, open_world_hint = false)
    )]
    async fn get_entry(
        &self,
        Parameters(args): Parameters<EntryArgs>,
    ) -> Result<CallToolResult, McpError> {
        match self.bundle.entry(args.id.trim()) {
            Some(entry) => json_result(&entry.raw()),
            None => Err(McpError::invalid_params(
                format!("no entry has the id `{}`", args.id),
                None,
            )),
        }
    }

    #[tool(
        description = "Search the knowledge base's entries and articles (English, or Chinese with lang=zh): a pasted error message ranks the entry that recognises it first (score 1), then word matches (scores below 0.9). Returns ids, titles and scores 0-1, best first; fetch an entry with get_entry.",
        annotations(
            title = "Search the knowledge base",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, McpError> {
        let lang = lang_of(args.lang.as_deref())?;
        let limit = args.limit.unwrap_or(10);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(McpError::invalid_params(
                format!("limit must be 1 to {MAX_LIMIT}, not {limit}"),
                None,
            ));
        }
        let hits = self
            .search
            .search(self.bundle.index(), &args.query, lang, limit as usize)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let value = serde_json::to_value(&hits)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        json_result(&value)
    }
}

#[tool_handler(router = self.router)]
impl ServerHandler for Server {
    /// Every bad input is the same JSON-RPC "invalid params" error (the contract): rmcp
    /// answers arguments that do not deserialise (a missing `text`, a number where a
    /// string belongs) with an error *result* instead (MCP's SEP-1303), while errata's own
    /// checks (an unknown id, a bad `lang`) are JSON-RPC errors. errata's tools never
    /// return error results themselves, so any error result here is rmcp's, and becomes
    /// the error every other bad input gets.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, McpError> {
        let tool = request.name.to_string();
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        match self.router.call(call).await? {
            rmcp::model::CallToolResponse::Complete(result) if result.is_error == Some(true) => {
                let why: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                    .collect();
                Err(McpError::invalid_params(
                    format!("bad arguments for `{tool}`: {}", why.join("; ")),
                    None,
                ))
            }
            answer => Ok(answer),
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("errata", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "A knowledge base of GPU/CUDA errors. Give match_error the error message or log \
             the user pasted; it says what causes it, what does not help and what does.",
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resources: Vec<Resource> = self
            .bundle
            .entries()
            .iter()
            .map(|e| {
                Resource::new(format!("{ENTRY_URI}{}", e.id), e.id.clone())
                    .with_description(e.signature.clone())
                    .with_mime_type("application/json")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let entry = request
            .uri
            .strip_prefix(ENTRY_URI)
            .and_then(|id| self.bundle.entry(id))
            .ok_or_else(|| {
                McpError::resource_not_found(format!("no resource `{}`", request.uri), None)
            })?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(entry.raw_json(), request.uri.clone())
                .with_mime_type("application/json"),
        ])
        .into())
    }
}
