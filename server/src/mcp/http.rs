//! Streamable HTTP: not supported yet (the configuration says so; this is the one place a
//! connection over HTTP would be made).

use rmcp::RoleClient;
use rmcp::model::ClientConfig;
use rmcp::service::RunningService;

pub(super) async fn connect(
    _url: &str,
    _timeout: std::time::Duration,
) -> Result<RunningService<RoleClient, ClientConfig>, String> {
    Err("streamable HTTP (`url`) is not supported yet; use `command`".to_owned())
}
