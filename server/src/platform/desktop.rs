//! A desktop notification: the freedesktop.org service on the session D-Bus on Linux and the
//! BSDs (zbus on our tokio runtime), the native APIs on macOS and Windows (`notify-rust`).

/// Show one notification, titled `summary`, from the application `livenote`. `Err` is one line
/// for the log: no session bus, no notification service, a refusal.
pub async fn show(summary: &str, body: &str) -> Result<(), String> {
    let mut n = notify_rust::Notification::new();
    n.appname("livenote").summary(summary).body(body);
    show_built(n).await
}

#[cfg(all(unix, not(target_os = "macos")))]
async fn show_built(n: notify_rust::Notification) -> Result<(), String> {
    n.show_async().await.map(drop).map_err(|e| e.to_string())
}

// Only a blocking call there: on a thread of its own, never the runtime's.
#[cfg(any(windows, target_os = "macos"))]
async fn show_built(n: notify_rust::Notification) -> Result<(), String> {
    match tokio::task::spawn_blocking(move || n.show().map(drop).map_err(|e| e.to_string())).await {
        Ok(r) => r,
        Err(e) => Err(format!("the notification's thread ended: {e}")),
    }
}
