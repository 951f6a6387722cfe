//! rmcp's Streamable HTTP server (tokio, axum) with the tool the HTTP bench calls,
//! `hello {name}` → `Hello, {name}!`: legacy sessions and stateless 2026-07-28 requests on
//! `/mcp`, JSON responses, TCP_NODELAY on (without it, Nagle's delay would be measured).
//!
//! `rmcp_peer --http ADDR` (port 0: any) says where it listens on stderr, as baremcp does.

use axum::serve::ListenerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct HelloArgs {
    /// Who to greet.
    name: String,
}

#[derive(Clone)]
struct Peer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Peer {
    #[tool(description = "Greets someone by name")]
    fn hello(&self, Parameters(HelloArgs { name }): Parameters<HelloArgs>) -> String {
        format!("Hello, {name}!")
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .skip_while(|a| a != "--http")
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(None)
        .with_json_response(true);
    let service: StreamableHttpService<Peer, LocalSessionManager> = StreamableHttpService::new(
        || Ok(Peer { tool_router: Peer::tool_router() }),
        Default::default(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("serving MCP at http://{}/mcp", listener.local_addr()?);
    // Small responses leave at once, as baremcp's and the floor's do.
    let listener = listener.tap_io(|tcp| drop(tcp.set_nodelay(true)));
    axum::serve(listener, router).await
}
