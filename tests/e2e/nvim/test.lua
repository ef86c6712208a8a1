-- End-to-end test of the README's Neovim setup (init.lua beside this file) against the real
-- `livenote lsp`, headless, as a new user would use it: diagnostics, completion, "Make live"
-- (from the code-action menu and as a command) and the status lens, plus inlay hints.
--
--   nvim --headless --clean -u tests/e2e/nvim/init.lua -l tests/e2e/nvim/test.lua
--
-- LIVENOTE_BIN: the server binary (default: `livenote` on PATH, as in the README).
-- Prints one line per check and a closing "N passed, N failed" line; exits 0 when every check
-- passed, 1 when one failed, 2 on the overall timeout. `server/tests/nvim.rs` runs it.

local WAIT_MS = tonumber(vim.env.LIVENOTE_NVIM_WAIT_MS) or 10000 -- one wait for the server
local OVERALL_MS = tonumber(vim.env.LIVENOTE_NVIM_TIMEOUT_MS) or 120000

local function out(line)
  io.stdout:write(line, '\n')
  io.stdout:flush()
end

-- Never hang: a libuv timer fires even while a check sits in vim.wait().
local watchdog = assert(vim.uv.new_timer())
watchdog:start(OVERALL_MS, 0, function()
  io.stdout:write(('FAIL overall timeout: the test did not finish in %d ms\n'):format(OVERALL_MS))
  io.stdout:flush()
  os.exit(2)
end)

-- Everything the editor would show the user as a message (errors from the server included).
local notes = {}
local function record(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  if (level or 0) >= vim.log.levels.WARN then
    out('     (the editor showed: ' .. tostring(msg) .. ')')
  end
end
vim.notify = record
vim.notify_once = function(msg, level)
  record(msg, level)
  return true
end
-- Prompts (a server's window/showMessageRequest goes to vim.ui.select) are shown in the report
-- and dismissed, as a user closing them; headless, the default would wait for keys.
vim.ui.select = function(_, opts, on_choice)
  out('     (prompt dismissed: ' .. tostring(opts and opts.prompt) .. ')')
  on_choice(nil)
end
vim.ui.input = function(opts, on_confirm)
  out('     (prompt dismissed: ' .. tostring(opts and opts.prompt) .. ')')
  on_confirm(nil)
end
local function errors_notified()
  local errs = {}
  for _, n in ipairs(notes) do
    if n.level >= vim.log.levels.WARN then
      table.insert(errs, n.msg)
    end
  end
  return errs
end

-- Requests the server sends to the editor, by method (refreshes must not come in floods).
local from_server = {} ---@type table<string, integer>
for _, method in ipairs({ 'workspace/inlayHint/refresh', 'workspace/codeLens/refresh' }) do
  local default = vim.lsp.handlers[method]
  vim.lsp.handlers[method] = function(...)
    from_server[method] = (from_server[method] or 0) + 1
    if default then
      return default(...)
    end
    return vim.NIL
  end
end

-- The LSP log (the server's stderr goes there too): only this run's part is shown on failure.
local log_file = vim.lsp.log.get_filename()
local log_start = vim.fn.getfsize(log_file)
log_start = log_start > 0 and log_start or 0

-- The server binary under test, a new user's (empty) trust list kept out of the real one, and
-- the server's exit status; the rest of the configuration is init.lua's, untouched.
local server_exit = nil ---@type {code: integer, signal: integer}?
vim.lsp.config('livenote', {
  cmd = vim.env.LIVENOTE_BIN and { vim.env.LIVENOTE_BIN, 'lsp' } or nil,
  cmd_env = { LIVENOTE_DATA_DIR = vim.fn.tempname() .. '-data' },
  on_exit = function(code, signal)
    server_exit = { code = code, signal = signal }
  end,
})

-- A scratch copy of the fixture workspace (removed when Nvim exits).
local here = vim.fn.fnamemodify(arg[0], ':p:h')
local ws = vim.fn.tempname() .. '-workspace'
vim.fn.mkdir(ws, 'p')
for name, kind in vim.fs.dir(here .. '/workspace') do
  if kind == 'file' then
    vim.fn.writefile(vim.fn.readfile(here .. '/workspace/' .. name, 'b'), ws .. '/' .. name, 'b')
  end
end
vim.fn.writefile({ '# Errands', '', '- post office' }, ws .. '/errands.md')

-------------------------------------------------------------------------------------------------
-- Helpers

local passed, failed = 0, 0
local timeouts = 0 -- checks in a row that ended waiting on the server

--- Run one check: `fn` returns a detail to show or raises a message. After two checks in a row
--- timed out the server is taken for stuck, and the rest fail at once instead of waiting.
local function check(name, fn)
  if timeouts >= 2 then
    failed = failed + 1
    out(('FAIL %s: not run, the server stopped answering (see above)'):format(name))
    return
  end
  local ok, res = xpcall(fn, function(e)
    return type(e) == 'string' and e or vim.inspect(e)
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
local function wait_for(what, pred, describe, timeout)
  local value
  local ok = vim.wait(timeout or WAIT_MS, function()
    value = pred()
    return value ~= nil and value ~= false
  end, 50)
  if not ok then
    error(('timed out after %d ms waiting for %s%s'):format(
      timeout or WAIT_MS,
      what,
      describe and ('; got ' .. describe()) or ''
    ), 0)
  end
  return value
end

local function client_of(buf)
  return vim.lsp.get_clients({ bufnr = buf, name = 'livenote' })[1]
end

--- Open a note of the workspace and wait until livenote is attached to it.
local function open(name)
  vim.cmd.edit(vim.fn.fnameescape(ws .. '/' .. name))
  local buf = vim.api.nvim_get_current_buf()
  wait_for('livenote to attach to ' .. name, function()
    return client_of(buf)
  end, function()
    local names = vim.tbl_map(function(c)
      return c.name
    end, vim.lsp.get_clients())
    return ('filetype=%q, clients=%s'):format(vim.bo[buf].filetype, vim.inspect(names))
  end)
  return buf, client_of(buf)
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function text(buf)
  return table.concat(lines(buf), '\n')
end

local function count_lines(buf, pattern)
  local n = 0
  for _, l in ipairs(lines(buf)) do
    if l:match(pattern) then
      n = n + 1
    end
  end
  return n
end

local function lens_titles(buf)
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(titles, lens.command and lens.command.title or '<unresolved>')
  end
  return titles
end

local function find_lens(buf, pattern)
  for _, title in ipairs(lens_titles(buf)) do
    if title:match(pattern) then
      return title
    end
  end
end

--- The labels a completion request at (line, character), 0-based, offers.
local function completion_labels(buf, line, character)
  local client = assert(client_of(buf), 'livenote is not attached')
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = line, character = character },
    context = { triggerKind = 1 },
  }
  local resp = vim.lsp.buf_request_sync(buf, 'textDocument/completion', params, WAIT_MS)
  local r = resp and resp[client.id]
  if not r then
    error('no answer to textDocument/completion within ' .. WAIT_MS .. ' ms', 0)
  elseif r.err then
    error('textDocument/completion failed: ' .. vim.inspect(r.err), 0)
  end
  local items = r.result and (r.result.items or r.result) or {}
  local labels, by_label = {}, {}
  for _, item in ipairs(items) do
    table.insert(labels, item.label)
    by_label[item.label] = item
  end
  return labels, by_label
end

--- Run a server command as Nvim runs a lens's or an action's command; return its result.
local function exec(client, buf, command, arguments)
  local reply
  client:exec_cmd({ title = command, command = command, arguments = arguments }, { bufnr = buf }, function(err, result)
    reply = { err = err, result = result }
  end)
  wait_for('the reply to ' .. command, function()
    return reply
  end)
  assert(not reply.err, command .. ' failed: ' .. vim.inspect(reply.err))
  return reply.result
end

local function missing(labels, wanted)
  local have = {}
  for _, l in ipairs(labels) do
    have[l] = true
  end
  return vim.tbl_filter(function(w)
    return not have[w]
  end, wanted)
end

-------------------------------------------------------------------------------------------------
-- The checks, in the order a new user meets the features.

out(('nvim %s, server %s, workspace %s'):format(
  tostring(vim.version()),
  vim.env.LIVENOTE_BIN or 'livenote (PATH)',
  ws
))

local broken ---@type integer
check('attach: the README config starts livenote at the workspace root', function()
  local client
  broken, client = open('broken.md')
  local root, want = vim.uv.fs_realpath(client.root_dir or ''), vim.uv.fs_realpath(ws)
  assert(root == want, ('root_dir is %s, expected %s'):format(client.root_dir, ws))
  local info = client.server_info or {}
  return ('%s %s, %s positions'):format(info.name, info.version, client.offset_encoding)
end)

check('diagnostics: `active: yes` is live/wrong-type from livenote', function()
  local d = wait_for('a live/wrong-type diagnostic', function()
    for _, d in ipairs(vim.diagnostic.get(broken)) do
      if d.code == 'live/wrong-type' and d.source == 'livenote' then
        return d
      end
    end
  end, function()
    return vim.inspect(vim.tbl_map(function(d)
      return ('%d:%d %s %s'):format(d.lnum, d.col, d.source, d.code)
    end, vim.diagnostic.get(broken)))
  end)
  assert(d.lnum == 4 and d.col == 10, ('at %d:%d, expected on `yes` (4:10)'):format(d.lnum, d.col))
  assert(d.severity == vim.diagnostic.severity.ERROR, 'severity ' .. tostring(d.severity))
  return ('%d:%d %s'):format(d.lnum + 1, d.col + 1, d.message)
end)

check('idle: reading a note from disk does not start a refresh storm', function()
  -- Any program reading a note (the editor opening it, grep, a backup) opens the file; the
  -- server watches the workspace and must not take that for a change.
  vim.wait(300)
  local before = from_server['workspace/inlayHint/refresh'] or 0
  vim.fn.readfile(ws .. '/broken.md')
  vim.wait(1000)
  local n = (from_server['workspace/inlayHint/refresh'] or 0) - before
  -- Nothing changed: no refresh is due (one may fall on a minute boundary).
  assert(n <= 1, ('the server sent %d workspace/inlayHint/refresh requests in 1 s after one read'):format(n))
  return ('%d refresh request(s) in 1 s'):format(n)
end)

check('status lens (from the config\'s LspAttach refresh): the broken note is invalid', function()
  return wait_for('an "Invalid: fix 1 error" lens', function()
    return find_lens(broken, '^Invalid: fix 1 error$')
  end, function()
    return vim.inspect(lens_titles(broken))
  end)
end)

check('inlay hints: the cron value reads "every hour"', function()
  local function labels()
    local all = {}
    for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = broken })) do
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
  return wait_for('an "every hour" hint after the cronExpr value', function()
    for _, l in ipairs(labels()) do
      if l:match('^6:every hour') then
        return l
      end
    end
  end, function()
    return vim.inspect(labels())
  end)
end)

local complete ---@type integer
check('completion: keys inside `live:`', function()
  complete = open('complete.md')
  -- Type an indented empty line at the end of the block, as a user about to add a key.
  vim.api.nvim_buf_set_lines(complete, 4, 4, false, { '  ' })
  vim.api.nvim_win_set_cursor(0, { 5, 2 })
  local labels = completion_labels(complete, 4, 2)
  local lack = missing(labels, { 'triggers', 'active' })
  assert(#lack == 0, ('missing %s in %s'):format(vim.inspect(lack), vim.inspect(labels)))
  return table.concat(labels, ', ')
end)

check('completion: true/false after `active:`, and the chosen item fixes the line', function()
  vim.api.nvim_buf_set_lines(complete, 4, 5, false, { '  active: ' })
  vim.api.nvim_win_set_cursor(0, { 5, 10 })
  local labels, items = completion_labels(complete, 4, 10)
  local lack = missing(labels, { 'true', 'false' })
  assert(#lack == 0, ('missing %s in %s'):format(vim.inspect(lack), vim.inspect(labels)))
  -- Accept `true` as the completion menu would: its text edit replaces the value slot.
  local item = items['true']
  local client = assert(client_of(complete))
  local edit = item.textEdit
  if edit then
    edit = { range = edit.range or edit.replace, newText = edit.newText }
    vim.lsp.util.apply_text_edits({ edit }, complete, client.offset_encoding)
  else
    vim.api.nvim_buf_set_text(complete, 4, 10, 4, 10, { item.insertText or item.label })
  end
  local line = lines(complete)[5]
  assert(line == '  active: true', ('the line reads %q'):format(line))
  return labels and table.concat(labels, ', ')
end)

local passive ---@type integer
check('"Make live" from the code-action menu turns a passive note live', function()
  passive = open('passive.md')
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  local seen = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(seen, action.title)
      return action.title == 'Make live'
    end,
  })
  wait_for('`live:` and `objective:` in the buffer', function()
    return count_lines(passive, '^live:') > 0 and count_lines(passive, '^  objective:') > 0
  end, function()
    return ('actions %s, notes %s, text:\n%s'):format(vim.inspect(seen), vim.inspect(notes), text(passive))
  end)
  -- An action carrying both an edit and a command would rewrite the note a second time (the
  -- command's workspace/applyEdit) or fail loudly; give that time to show.
  vim.wait(1500, function()
    return count_lines(passive, '^live:') > 1 or #errors_notified() > 0
  end, 25)
  local errs = errors_notified()
  assert(#errs == 0, 'the editor showed errors: ' .. vim.inspect(errs) .. '\n' .. text(passive))
  assert(
    count_lines(passive, '^live:') == 1 and count_lines(passive, '^%-%-%-$') == 2,
    'expected one frontmatter with one `live:` block, got:\n' .. text(passive)
  )
  assert(lines(passive)[1] == '---', 'the frontmatter does not start the note:\n' .. text(passive))
  assert(text(passive):match('\n# Groceries\n\n%- milk\n%- bread$'), 'the body changed:\n' .. text(passive))
  return (text(passive):gsub('\n', '⏎'))
end)

check('status lens: the note made live waits for trust in a new workspace', function()
  -- What the config does on InsertLeave/BufEnter; repeated while an earlier refresh is in flight.
  return wait_for('a "Waiting for trust" lens', function()
    vim.lsp.codelens.refresh({ bufnr = passive })
    return find_lens(passive, '^Waiting for trust$')
  end, function()
    return vim.inspect(lens_titles(passive))
  end)
end)

check('trust the workspace (livenote.trustWorkspace), leave insert mode: "● Live · never run"', function()
  local client = assert(client_of(passive), 'livenote is not attached')
  local reply = exec(client, passive, 'livenote.trustWorkspace', { vim.uri_from_bufnr(passive) })
  local want = vim.uv.fs_realpath(ws)
  assert(
    type(reply) == 'table' and vim.tbl_contains(reply, want),
    ('trusted %s, expected the workspace %s'):format(vim.inspect(reply), want)
  )
  -- Nvim 0.11 has no workspace/codeLens/refresh: the config's InsertLeave refresh shows it.
  return wait_for('a "● Live · never run" lens', function()
    vim.api.nvim_feedkeys(vim.keycode('i<Esc>'), 'x', false)
    return find_lens(passive, '^● Live · never run')
  end, function()
    return vim.inspect(lens_titles(passive))
  end)
end)

check('"Make live" as a command: the server\'s workspace/applyEdit lands in the buffer', function()
  local buf, client = open('errands.md')
  exec(client, buf, 'livenote.makeLive', { vim.uri_from_bufnr(buf) })
  wait_for('`live:` and `objective:` in the buffer', function()
    return count_lines(buf, '^live:') == 1 and count_lines(buf, '^  objective:') == 1
  end, function()
    return ('notes %s, text:\n%s'):format(vim.inspect(notes), text(buf))
  end)
  local errs = errors_notified()
  assert(#errs == 0, 'the editor showed errors: ' .. vim.inspect(errs))
  return wait_for('a "● Live · never run" lens', function()
    vim.lsp.codelens.refresh({ bufnr = buf })
    return find_lens(buf, '^● Live · never run')
  end, function()
    return vim.inspect(lens_titles(buf))
  end)
end)

check('shutdown: the server exits cleanly when Nvim stops it', function()
  local client = assert(vim.lsp.get_clients({ name = 'livenote' })[1], 'no livenote client')
  client:stop()
  wait_for('the server to exit', function()
    return server_exit
  end, nil, 5000)
  assert(server_exit.code == 0 and server_exit.signal == 0, 'exit ' .. vim.inspect(server_exit))
  return 'exit code 0'
end)

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
