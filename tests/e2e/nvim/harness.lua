-- The harness both headless Neovim tests share: test.lua (the README's hand-written config) and
-- plugin_test.lua (the plugin in editors/nvim). `nvim -l` runs a script, not a plugin, and
-- test.lua must run with the README's init.lua alone, so each test loads this file by path,
-- from its own directory:
--
--   local H = dofile(vim.fn.fnamemodify(arg[0], ':p:h') .. '/harness.lua')
--
-- Loading it starts the overall watchdog, sends the editor's messages and prompts to the report,
-- and marks where this run's part of the LSP log starts. Then a test copies its fixture
-- workspace (H.copy_workspace), prints H.header(), runs its checks with H.check and ends with
-- H.finish(), which prints the closing "N passed, N failed" line and exits 0 when every check
-- passed, 1 when one failed; the watchdog exits 2.

local H = {}

H.WAIT_MS = tonumber(vim.env.LIVENOTE_NVIM_WAIT_MS) or 10000 -- one wait for the server
H.OVERALL_MS = tonumber(vim.env.LIVENOTE_NVIM_TIMEOUT_MS) or 120000

-- What the tests choose, set after loading.
H.traceback = false -- check(): add a Lua traceback to a failed check's message
H.wait_initialized = false -- open(): wait for the server's initialize answer, not only the attach
H.ws = nil ---@type string? the scratch workspace open() opens notes from (see copy_workspace)

function H.out(line)
  io.stdout:write(line, '\n')
  io.stdout:flush()
end
local out = H.out

-- Never hang: a libuv timer fires even while a check sits in vim.wait().
local watchdog = assert(vim.uv.new_timer())
watchdog:start(H.OVERALL_MS, 0, function()
  io.stdout:write(('FAIL overall timeout: the test did not finish in %d ms\n'):format(H.OVERALL_MS))
  io.stdout:flush()
  os.exit(2)
end)

-- Everything the editor would show the user as a message (the plugin's and the server's, errors
-- included).
H.notes = {} ---@type {msg: string, level: integer}[]
local function record(msg, level)
  table.insert(H.notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  if (level or 0) >= vim.log.levels.WARN then
    out('     (the editor showed: ' .. tostring(msg) .. ')')
  end
end
vim.notify = record
-- A server's window/showMessage: Neovim echoes it (no vim.notify), so record it here too.
local show_message = vim.lsp.handlers['window/showMessage']
local message_levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx, config)
  if type(params) == 'table' then
    record('LSP: ' .. tostring(params.message), message_levels[params.type] or vim.log.levels.INFO)
  end
  return show_message(err, params, ctx, config)
end
vim.notify_once = function(msg, level)
  record(msg, level)
  return true
end
-- Prompts (a server's window/showMessageRequest, such as the trust question, goes to
-- vim.ui.select) are shown in the report and dismissed, as a user closing them; headless, the
-- default would wait for keys.
vim.ui.select = function(_, opts, on_choice)
  out('     (prompt dismissed: ' .. tostring(opts and opts.prompt) .. ')')
  on_choice(nil)
end
vim.ui.input = function(opts, on_confirm)
  out('     (prompt dismissed: ' .. tostring(opts and opts.prompt) .. ')')
  on_confirm(nil)
end

--- Messages at WARN or above shown since message number `from` (0: since the start).
function H.problems_since(from)
  local errs = {}
  for i = from + 1, #H.notes do
    if H.notes[i].level >= vim.log.levels.WARN then
      table.insert(errs, H.notes[i].msg)
    end
  end
  return errs
end

-- The LSP log (the server's stderr goes there too): only this run's part is shown on failure.
local log_file = vim.lsp.log.get_filename()
local log_start = vim.fn.getfsize(log_file)
log_start = log_start > 0 and log_start or 0

--- The server's exit status, once it exited; `on_exit` of the livenote client config records it.
H.server_exit = nil ---@type {code: integer, signal: integer}?
function H.on_exit(code, signal)
  H.server_exit = { code = code, signal = signal }
end

--- A scratch copy of the fixture workspace `dir` (removed when Nvim exits), which open() uses.
function H.copy_workspace(dir)
  local ws = vim.fn.tempname() .. '-workspace'
  vim.fn.mkdir(ws, 'p')
  for name, kind in vim.fs.dir(dir) do
    if kind == 'file' then
      vim.fn.writefile(vim.fn.readfile(dir .. '/' .. name, 'b'), ws .. '/' .. name, 'b')
    end
  end
  H.ws = ws
  return ws
end

-------------------------------------------------------------------------------------------------
-- Checks

local passed, failed = 0, 0
local timeouts = 0 -- checks in a row that ended waiting on the server

--- Run one check: `fn` returns a detail to show or raises a message. After two checks in a row
--- timed out the server is taken for stuck, and the rest fail at once instead of waiting.
function H.check(name, fn)
  if timeouts >= 2 then
    failed = failed + 1
    out(('FAIL %s: not run, the server stopped answering (see above)'):format(name))
    return
  end
  local ok, res = xpcall(fn, function(e)
    local msg = type(e) == 'string' and e or vim.inspect(e)
    return H.traceback and (msg .. '\n' .. debug.traceback('', 2)) or msg
  end)
  if ok then
    passed, timeouts = passed + 1, 0
    out(('ok   %s%s'):format(name, res and (': ' .. tostring(res)) or ''))
  else
    failed = failed + 1
    timeouts = (res:match('timed out') or res:match('no answer')) and timeouts + 1 or 0
    out(('FAIL %s: %s'):format(name, res))
  end
end

--- Wait until `pred` returns a value; raise `what` and the state `describe` shows otherwise.
function H.wait_for(what, pred, describe, timeout)
  local value
  local ok = vim.wait(timeout or H.WAIT_MS, function()
    value = pred()
    return value ~= nil and value ~= false
  end, 50)
  if not ok then
    error(
      ('timed out after %d ms waiting for %s%s'):format(
        timeout or H.WAIT_MS,
        what,
        describe and ('; got ' .. describe()) or ''
      ),
      0
    )
  end
  return value
end
local wait_for = H.wait_for

--- The line that opens the report: which Neovim, server and workspace.
function H.header()
  out(
    ('nvim %s, server %s, workspace %s'):format(
      tostring(vim.version()),
      vim.env.LIVENOTE_BIN or 'livenote (PATH)',
      H.ws
    )
  )
end

--- Print the closing line (and this run's LSP log when a check failed), then quit Nvim: exit 0
--- when every check passed, 1 otherwise.
function H.finish()
  out(('%d passed, %d failed'):format(passed, failed))
  if failed > 0 then
    local log = io.open(log_file, 'r')
    if log then
      log:seek('set', log_start)
      local tail = log:read('*a') or ''
      log:close()
      out('--- ' .. log_file .. ' (this run):')
      out(#tail > 20000 and tail:sub(-20000) or tail)
    end
  end
  watchdog:stop()
  vim.cmd(failed == 0 and 'qall!' or 'cquit 1')
end

-------------------------------------------------------------------------------------------------
-- The editor's state

function H.client_of(buf)
  return vim.lsp.get_clients({ bufnr = buf, name = 'livenote' })[1]
end
local client_of = H.client_of

--- Open a note of the workspace and wait until livenote is attached to it (and, with
--- H.wait_initialized, has its initialize answer).
function H.open(name)
  vim.cmd.edit(vim.fn.fnameescape(H.ws .. '/' .. name))
  local buf = vim.api.nvim_get_current_buf()
  wait_for('livenote to attach to ' .. name, function()
    local c = client_of(buf)
    if H.wait_initialized then
      return c and c.initialized and c
    end
    return c
  end, function()
    local names = vim.tbl_map(function(c)
      return c.name
    end, vim.lsp.get_clients())
    return ('filetype=%q, clients=%s'):format(vim.bo[buf].filetype, vim.inspect(names))
  end)
  return buf, client_of(buf)
end

--- Assert that `client` runs at the root of the workspace.
function H.assert_root(client)
  local root, want = vim.uv.fs_realpath(client.root_dir or ''), vim.uv.fs_realpath(H.ws)
  assert(root == want, ('root_dir is %s, expected %s'):format(client.root_dir, H.ws))
end

function H.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

function H.text(buf)
  return table.concat(H.lines(buf), '\n')
end

function H.count_lines(buf, pattern)
  local n = 0
  for _, l in ipairs(H.lines(buf)) do
    if l:match(pattern) then
      n = n + 1
    end
  end
  return n
end

function H.lens_titles(buf)
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(titles, lens.command and lens.command.title or '<unresolved>')
  end
  return titles
end

function H.find_lens(buf, pattern)
  for _, title in ipairs(H.lens_titles(buf)) do
    if title:match(pattern) then
      return title
    end
  end
end

--- The inlay hints of `buf` as "line:label" (0-based line).
function H.hint_labels(buf)
  local all = {}
  for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
    local label = h.inlay_hint.label
    if type(label) == 'table' then
      label = table.concat(vim.tbl_map(function(p)
        return p.value
      end, label))
    end
    table.insert(all, ('%d:%s'):format(h.inlay_hint.position.line, label))
  end
  return all
end

--- Wait for livenote's diagnostic `code` on `buf` and return it.
function H.wait_diagnostic(buf, code)
  return wait_for(('a %s diagnostic'):format(code), function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == code and d.source == 'livenote' then
        return d
      end
    end
  end, function()
    return vim.inspect(vim.tbl_map(function(d)
      return ('%d:%d %s %s'):format(d.lnum, d.col, d.source, d.code)
    end, vim.diagnostic.get(buf)))
  end)
end

--- The shutdown check: stop the livenote client and wait for the server to exit. On 0.11+ the
--- exit status (recorded by H.on_exit) must be a clean 0; 0.10 only says the client stopped.
function H.shutdown()
  local client = assert(vim.lsp.get_clients({ name = 'livenote' })[1], 'no livenote client')
  if vim.fn.has('nvim-0.11') == 1 then
    client:stop()
    wait_for('the server to exit', function()
      return H.server_exit
    end, nil, 5000)
    assert(H.server_exit.code == 0 and H.server_exit.signal == 0, 'exit ' .. vim.inspect(H.server_exit))
    return 'exit code 0'
  end
  client.stop()
  wait_for('the server to exit', function()
    return client.is_stopped()
  end, nil, 5000)
  return 'stopped'
end

return H
