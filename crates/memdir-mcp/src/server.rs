//! The MCP server: [`Tools`] behind rmcp's `ServerHandler`, plus resources (core, the index,
//! today's log) and the save-before-compaction prompt. Used by both transports: stdio here,
//! streamable HTTP in [`crate::http`].

use crate::prompts::{FLUSH, FLUSH_PROMPT_NAME, GUIDE, GUIDE_URI};
use crate::stdio::LineTransport;
use crate::tools::{ToolSpec, Tools, specs};
use memdir_core::path::MemPath;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::sync::Arc;

/// Resource URIs.
const URI_CORE: &str = "memdir://core";
const URI_INDEX: &str = "memdir://index";
const URI_TODAY: &str = "memdir://log/today";

/// The MCP face of a memory folder.
#[derive(Clone)]
pub struct MemdirServer {
    tools: Tools,
    listed: Arc<Vec<Tool>>,
}

fn to_rmcp(spec: &ToolSpec) -> Tool {
    let schema = match &spec.input_schema {
        Value::Object(m) => m.clone(),
        _ => serde_json::Map::new(),
    };
    Tool::new(spec.name, spec.description, Arc::new(schema))
        .with_title(spec.title)
        .with_annotations(
            ToolAnnotations::with_title(spec.title)
                .read_only(spec.read_only)
                .destructive(spec.destructive)
                .idempotent(spec.idempotent)
                .open_world(false),
        )
}

impl MemdirServer {
    /// A server over `tools`.
    pub fn new(tools: Tools) -> MemdirServer {
        // Built once per process: a service makes a server for every tenant it opens, and
        // building the listing (the tools' JSON schemas) was a few percent of a first touch.
        static LISTED: std::sync::OnceLock<Arc<Vec<Tool>>> = std::sync::OnceLock::new();
        let listed = LISTED
            .get_or_init(|| Arc::new(specs().iter().map(to_rmcp).collect()))
            .clone();
        MemdirServer { tools, listed }
    }

    fn read_text(&self, path: &str) -> Result<Option<String>, ErrorData> {
        let p = MemPath::parse_file(path)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        match self.tools.memory().store().read(&p) {
            Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
            Err(memdir::StoreError::NotFound(_)) => Ok(None),
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }

    fn today_log(&self) -> String {
        let mem = self.tools.memory();
        mem.layout().log_path(mem.clock().now().date())
    }
}

fn text_result(t: crate::ToolText) -> CallToolResult {
    if t.is_error {
        CallToolResult::error(vec![ContentBlock::text(t.text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(t.text)])
    }
}

impl ServerHandler for MemdirServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("memdir", env!("CARGO_PKG_VERSION")))
        .with_instructions(crate::prompts::instructions_for(
            &self.tools.memory().layout(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.listed.as_ref().clone(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let tools = self.tools.clone();
        // File I/O and search block; keep them off the async workers.
        let out = tokio::task::spawn_blocking(move || tools.call(&name, args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("tool task failed: {e}"), None))?;
        match out {
            Ok(t) => Ok(text_result(t).into()),
            Err(unknown) => Err(ErrorData::invalid_params(unknown.to_string(), None)),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut out = vec![
            Resource::new(URI_CORE, "core")
                .with_title(format!(
                    "Core memory ({})",
                    self.tools.memory().layout().core
                ))
                .with_description("Always-loaded facts; capped in size.")
                .with_mime_type("text/markdown"),
            Resource::new(URI_TODAY, "today")
                .with_title(format!("Today's log ({})", self.today_log()))
                .with_description("Today's append-only log.")
                .with_mime_type("text/markdown"),
            Resource::new(GUIDE_URI, "guide")
                .with_title("How to use memdir")
                .with_description("The layers, when to log vs note vs core, how to find things.")
                .with_mime_type("text/markdown"),
        ];
        let layout = self.tools.memory().layout();
        if let Some(index) = layout.index_path()
            && self.read_text(index)?.is_some()
        {
            out.insert(
                1,
                Resource::new(URI_INDEX, "index")
                    .with_title(format!("Index ({index})"))
                    .with_description("One line per note: what is where.")
                    .with_mime_type("text/markdown"),
            );
        }
        Ok(ListResourcesResult::with_all_items(out))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = match request.uri.as_str() {
            URI_CORE => self
                .read_text(self.tools.memory().layout().core)?
                .unwrap_or_default(),
            GUIDE_URI => GUIDE.to_string(),
            // Shown as the context shows it, so external entries stay fenced.
            URI_TODAY => {
                let mem = self.tools.memory();
                mem.day_log_shown(mem.clock().now().date())
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
                    .unwrap_or_default()
            }
            URI_INDEX => {
                let index = self.tools.memory().layout().index_path();
                index
                    .map(|i| self.read_text(i))
                    .transpose()?
                    .flatten()
                    .ok_or_else(|| {
                        ErrorData::resource_not_found(
                            "there is no index of notes in this memory folder yet",
                            None,
                        )
                    })?
            }
            other => {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "no resource {other}: use {URI_CORE}, {URI_INDEX}, {URI_TODAY} or {GUIDE_URI}"
                    ),
                    None,
                ));
            }
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri.clone()).with_mime_type("text/markdown"),
        ])
        .into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new(
                FLUSH_PROMPT_NAME,
                Some("The silent turn to run just before compaction: write down what matters now."),
                None,
            )
            .with_title("Save before compaction"),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != FLUSH_PROMPT_NAME {
            return Err(ErrorData::invalid_params(
                format!("unknown prompt {:?}: use {FLUSH_PROMPT_NAME}", request.name),
                None,
            ));
        }
        let mut r = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, FLUSH)]);
        r.description = Some("Save what matters to memory before the context is compacted.".into());
        Ok(r.into())
    }
}

/// Sends logs (rmcp's included) to stderr, never stdout; `MEMDIR_LOG` sets the filter
/// (default `warn`). Safe to call more than once.
pub fn init_logging(filter: Option<&str>) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter.unwrap_or("warn"))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Serves MCP over stdin/stdout until the client disconnects. Every request is answered, a bad
/// line too (see [`crate::stdio`]).
pub fn serve_stdio(tools: Tools) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        let service = MemdirServer::new(tools)
            .serve(LineTransport::new(tokio::io::stdin(), tokio::io::stdout()))
            .await
            .map_err(|e| format!("mcp handshake over stdio failed: {e}"))?;
        service
            .waiting()
            .await
            .map_err(|e| format!("mcp server stopped: {e}"))?;
        Ok(())
    })
}
