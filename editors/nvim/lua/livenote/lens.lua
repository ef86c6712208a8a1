--- Keeping livenote's status lenses current.
---
--- Neovim (0.10 and 0.11) only fetches lenses when asked, and `vim.lsp.codelens.refresh()` drops
--- a refresh while an earlier one for the buffer is still in flight. A fast run (a `command`
--- provider answers in milliseconds) makes the server ask for "Updating…" and then the final
--- status within a few ms, so the second refresh would be lost and the lens would stay at
--- "Updating…". This module fetches lenses itself, per buffer, and never drops a refresh: one
--- asked for while a request is in flight is sent again when that one answers. Results go
--- through `vim.lsp.codelens.on_codelens`, so display, `vim.lsp.codelens.get()` and
--- `vim.lsp.codelens.run()` are Neovim's own.
local compat = require('livenote.compat')

local M = {}

local METHOD = 'textDocument/codeLens'
M.REFRESH = 'workspace/codeLens/refresh'

--- A request that got no answer in this long no longer blocks new ones (a stuck server must
--- not freeze the lenses for good).
local STALE_MS = 10000

---@class livenote.LensState
---@field inflight? integer uv.now() when the pending request was sent
---@field again? boolean a refresh was asked for while one was in flight
---@field timer? uv.uv_timer_t the debounce timer

---@type table<integer, livenote.LensState>
local states = {}

--- The nvim_buf_attach listener in force for each buffer; an older one (from a previous
--- attach) finds itself replaced and detaches on its next call.
---@type table<integer, table>
local listeners = {}

--- Neovim 0.12+ manages lenses itself (vim.lsp.codelens.enable, with its own
--- workspace/codeLens/refresh support); the plugin then only turns them on.
---@return boolean
function M.native()
  return type(vim.lsp.codelens.enable) == 'function'
end

local function livenote_client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'livenote' })[1]
end

--- Fetch the lenses of one buffer from livenote now (or right after the request in flight).
---@param bufnr integer
function M.refresh(bufnr)
  if not vim.api.nvim_buf_is_loaded(bufnr) or not require('livenote.config').current.codelens then
    return
  end
  local client = livenote_client(bufnr)
  if not client or not client.initialized then
    return
  end
  if M.native() then
    -- 0.12+ fetches lenses by itself (and deprecates refresh()); enabling is idempotent.
    pcall(vim.lsp.codelens.enable, true, { bufnr = bufnr })
    return
  end
  local st = states[bufnr] or {}
  states[bufnr] = st
  if st.inflight and vim.uv.now() - st.inflight < STALE_MS then
    st.again = true
    return
  end
  st.inflight, st.again = vim.uv.now(), false
  local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr) }
  local sent = compat.request(client, METHOD, params, function(err, result, ctx)
    st.inflight = nil
    if vim.api.nvim_buf_is_loaded(bufnr) then
      ctx.bufnr = ctx.bufnr or bufnr
      vim.lsp.codelens.on_codelens(err, result, ctx)
    end
    if st.again then
      st.again = false
      M.refresh(bufnr)
    end
  end, bufnr)
  if not sent then
    st.inflight = nil
  end
end

--- Refresh after `delay` ms of quiet: typing must not send a request per keystroke.
---@param bufnr integer
---@param delay integer
function M.schedule(bufnr, delay)
  local st = states[bufnr] or {}
  states[bufnr] = st
  if not st.timer then
    st.timer = vim.uv.new_timer()
  end
  st.timer:stop()
  st.timer:start(
    delay,
    0,
    vim.schedule_wrap(function()
      -- While the user types, the lens waits for InsertLeave: fetching it at every pause in
      -- typing would make it flicker over half-typed YAML.
      local mode = vim.api.nvim_get_mode().mode
      if mode:sub(1, 1) == 'i' and bufnr == vim.api.nvim_get_current_buf() then
        return
      end
      M.refresh(bufnr)
    end)
  )
end

--- The lenses livenote's server put in a buffer (any Neovim version).
---@param bufnr integer
---@return lsp.CodeLens[]
function M.get(bufnr)
  local client = livenote_client(bufnr)
  if not client then
    return {}
  end
  if M.native() then
    -- 0.12+: get() takes a filter and returns { client_id, lens } items.
    local ok, items = pcall(vim.lsp.codelens.get, { bufnr = bufnr, client_id = client.id })
    return ok and vim.tbl_map(function(i)
      return i.lens
    end, items) or {}
  end
  local ok, lenses = pcall(vim.lsp.codelens.get, bufnr)
  return ok and lenses or {}
end

--- Forget a buffer (detached or wiped out).
---@param bufnr integer
function M.forget(bufnr)
  local st = states[bufnr]
  if st and st.timer then
    st.timer:stop()
    if not st.timer:is_closing() then
      st.timer:close()
    end
  end
  states[bufnr] = nil
  listeners[bufnr] = nil
end

--- Client-level handler for the server's workspace/codeLens/refresh (Neovim 0.10 and 0.11 have
--- none): refresh livenote's lenses in the buffers shown in a window; hidden ones are
--- refreshed on BufEnter. Then hand over to a global handler if the user (or a newer Neovim)
--- installed one, so theirs keeps working.
---@param err lsp.ResponseError?
---@param result any
---@param ctx lsp.HandlerContext
---@param config? table
function M.on_refresh(err, result, ctx, config)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if client then
    for bufnr in pairs(client.attached_buffers or {}) do
      if vim.fn.bufwinid(bufnr) ~= -1 then
        M.refresh(bufnr)
      end
    end
  end
  local global = vim.lsp.handlers[M.REFRESH]
  if type(global) == 'function' and global ~= M.on_refresh then
    local ok, res = pcall(global, err, result, ctx, config)
    if ok and res ~= nil then
      return res
    end
  end
  return vim.NIL
end

--- Turn lenses on for a buffer that livenote just attached to: refresh now and on the events
--- that can change what they show.
---@param bufnr integer
---@param group integer the autocmd group of the plugin's buffer-local autocmds
---@param debounce_ms integer
function M.attach(bufnr, group, debounce_ms)
  if M.native() then
    pcall(vim.lsp.codelens.enable, true, { bufnr = bufnr })
    return
  end
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
    group = group,
    buffer = bufnr,
    desc = 'livenote: refresh the status lenses',
    callback = function(ev)
      M.refresh(ev.buf)
    end,
  })
  -- Text changes are watched with nvim_buf_attach rather than TextChanged: TextChanged only
  -- fires for the current buffer, from the UI loop, while the server's edits (a run, "Make
  -- live") also land in buffers shown in other windows, whose lenses must follow too.
  local token = {}
  listeners[bufnr] = token
  vim.api.nvim_buf_attach(bufnr, false, {
    on_lines = function()
      if listeners[bufnr] ~= token then
        return true -- detach this listener
      end
      M.schedule(bufnr, debounce_ms)
    end,
    on_reload = function()
      if listeners[bufnr] == token then
        M.schedule(bufnr, debounce_ms)
      end
    end,
    on_detach = function()
      if listeners[bufnr] == token then
        M.forget(bufnr)
      end
    end,
  })
  M.refresh(bufnr)
end

return M
