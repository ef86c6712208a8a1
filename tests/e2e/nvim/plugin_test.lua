-- End-to-end test of the Neovim plugin (editors/nvim) against the real `livenote lsp`, headless,
-- with nothing else loaded: only editors/nvim is put on 'runtimepath', then
-- require('livenote').setup(), and the :Live* commands are used as a user types them.
--
--   nvim --headless --clean -l tests/e2e/nvim/plugin_test.lua
--
-- LIVENOTE_BIN: the server binary (default: `livenote` on PATH).
-- Prints one line per check and a closing "N passed, N failed" line; exits 0 when every check
-- passed, 1 when one failed, 2 on the overall timeout. `server/tests/nvim.rs` runs it, on
-- Neovim 0.11 and, when install-0.10.sh installed it, on 0.10 (the plugin's vim.lsp.start path).
--
-- The harness (watchdog, check, wait_for, the LSP log on failure) is test.lua's, copied: that
-- file tests the README's hand-written config and stays independent of the plugin.

local WAIT_MS = tonumber(vim.env.LIVENOTE_NVIM_WAIT_MS) or 10000 -- one wait for the server
local OVERALL_MS = tonumber(vim.env.LIVENOTE_NVIM_TIMEOUT_MS) or 120000
local HAS_011 = vim.fn.has('nvim-0.11') == 1

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

-- Everything the editor would show the user as a message (the plugin's and the server's).
local notes = {} ---@type {msg: string, level: integer}[]
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
-- Prompts (the server's trust question goes to vim.ui.select) are dismissed, as a user closing
-- them; headless, the default would wait for keys.
vim.ui.select = function(_, opts, on_choice)
  out('     (prompt dismissed: ' .. tostring(opts and opts.prompt) .. ')')
  on_choice(nil)
end
vim.ui.input = function(opts, on_confirm)
  out('     (prompt dismissed: ' .. tostring(opts and opts.prompt) .. ')')
  on_confirm(nil)
end

--- Messages at WARN or above shown since message number `from`.
local function problems_since(from)
  local errs = {}
  for i = from + 1, #notes do
    if notes[i].level >= vim.log.levels.WARN then
      table.insert(errs, notes[i].msg)
    end
  end
  return errs
end

--- The first message since `from` matching `pattern` (plain text), at `level` or above.
local function message_since(from, pattern, level)
  for i = from + 1, #notes do
    if notes[i].msg:find(pattern, 1, true) and notes[i].level >= (level or 0) then
      return notes[i]
    end
  end
end

-- A global workspace/codeLens/refresh handler, as a user might have: the plugin's client-level
-- handler must refresh the lenses and still hand each request on to it (seen in the stack).
local lens_refreshes, via_plugin = 0, 0
vim.lsp.handlers['workspace/codeLens/refresh'] = function()
  lens_refreshes = lens_refreshes + 1
  if debug.traceback():find('lua/livenote/lens.lua', 1, true) then
    via_plugin = via_plugin + 1
  end
  return vim.NIL
end

-- The LSP log (the server's stderr goes there too): only this run's part is shown on failure.
local log_file = vim.lsp.log.get_filename()
local log_start = vim.fn.getfsize(log_file)
log_start = log_start > 0 and log_start or 0

-- The plugin, from this checkout, and nothing else.
local here = vim.fn.fnamemodify(arg[0], ':p:h')
local repo = vim.fn.fnamemodify(here, ':h:h:h')
local plugin_dir = repo .. '/editors/nvim'
vim.opt.rtp:prepend(plugin_dir)

-- A scratch copy of the fixture workspace (removed when Nvim exits); a new user's (empty)
-- trust list, kept out of the real one.
local ws = vim.fn.tempname() .. '-workspace'
vim.fn.mkdir(ws, 'p')
for name, kind in vim.fs.dir(here .. '/plugin-workspace') do
  if kind == 'file' then
    vim.fn.writefile(vim.fn.readfile(here .. '/plugin-workspace/' .. name, 'b'), ws .. '/' .. name, 'b')
  end
end
local data_dir = vim.fn.tempname() .. '-data'

-------------------------------------------------------------------------------------------------
-- Helpers

local passed, failed, skipped = 0, 0, 0
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
    return (type(e) == 'string' and e or vim.inspect(e)) .. '\n' .. debug.traceback('', 2)
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
    error(
      ('timed out after %d ms waiting for %s%s'):format(
        timeout or WAIT_MS,
        what,
        describe and ('; got ' .. describe()) or ''
      ),
      0
    )
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
    local c = client_of(buf)
    return c and c.initialized and c
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

--- Wait for a lens matching `pattern`, without asking for a refresh: the plugin must keep the
--- lenses current by itself.
local function wait_lens(buf, pattern, what)
  return wait_for(what or ('a lens matching %q'):format(pattern), function()
    return find_lens(buf, pattern)
  end, function()
    return vim.inspect(lens_titles(buf))
  end)
end

local function hint_labels(buf)
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

--- Show `buf` in the current window (a check that failed may have left another one there).
local function focus(buf)
  if buf and vim.api.nvim_buf_is_valid(buf) then
    vim.cmd('silent! only')
    vim.api.nvim_set_current_buf(buf)
  end
end

--- Run an Ex command as a user types it; a Lua error in the plugin fails the check.
local function ex(cmdline)
  local ok, err = pcall(vim.cmd, cmdline)
  assert(ok, (':%s raised an error: %s'):format(cmdline, tostring(err)))
end

-------------------------------------------------------------------------------------------------
-- The checks

out(
  ('nvim %s, server %s, workspace %s'):format(
    tostring(vim.version()),
    vim.env.LIVENOTE_BIN or 'livenote (PATH)',
    ws
  )
)

local attached = {} ---@type table<integer, boolean>
local server_exit = nil ---@type {code: integer, signal: integer}?

check('setup: bad options fail at setup, naming the option', function()
  local ok, err = pcall(require('livenote').setup, { inlay_hints = 'yes' })
  assert(not ok, 'setup accepted inlay_hints = "yes"')
  assert(tostring(err):find('inlay_hints', 1, true), 'the error does not name the option: ' .. tostring(err))
  return tostring(err)
end)

check('setup: the plugin from editors/nvim registers the server and the :Live* commands', function()
  local lua_dirs = vim.api.nvim_get_runtime_file('lua/livenote/init.lua', true)
  assert(
    #lua_dirs == 1 and lua_dirs[1]:find(plugin_dir, 1, true) == 1,
    'livenote loaded from ' .. vim.inspect(lua_dirs)
  )
  require('livenote').setup({
    cmd = { vim.env.LIVENOTE_BIN or 'livenote', 'lsp' },
    cmd_env = { LIVENOTE_DATA_DIR = data_dir },
    on_attach = function(_, bufnr)
      attached[bufnr] = true
    end,
    keymaps = { run = '<F5>', lens = false },
  })
  if HAS_011 then
    -- A user's own vim.lsp.config('livenote') merges with the plugin's (here: to see the exit).
    vim.lsp.config('livenote', {
      on_exit = function(code, signal)
        server_exit = { code = code, signal = signal }
      end,
    })
  end
  local commands = {
    'LiveRun',
    'LiveStop',
    'LiveMake',
    'LivePause',
    'LiveResume',
    'LivePassive',
    'LiveUndo',
    'LiveTrust',
    'LiveList',
    'LiveStatus',
  }
  local missing = vim.tbl_filter(function(c)
    return vim.fn.exists(':' .. c) ~= 2
  end, commands)
  assert(#missing == 0, 'missing commands: ' .. table.concat(missing, ', '))
  return table.concat(commands, ' ')
end)

check('no server: :LiveRun and :LiveList in a plain buffer say so, without an error', function()
  vim.cmd.enew()
  local from = #notes
  ex('LiveRun')
  local m = message_since(from, 'no livenote server', vim.log.levels.WARN)
  assert(m, 'no warning for :LiveRun, messages: ' .. vim.inspect(notes))
  from = #notes
  ex('LiveList')
  local m2 = message_since(from, 'no livenote server', vim.log.levels.WARN)
  assert(m2, 'no warning for :LiveList, messages: ' .. vim.inspect(notes))
  return m.msg .. ' | ' .. m2.msg
end)

local broken ---@type integer
check('attach: livenote starts at the workspace root; the user on_attach runs; keymaps are set', function()
  local client
  broken, client = open('broken.md')
  local root, want = vim.uv.fs_realpath(client.root_dir or ''), vim.uv.fs_realpath(ws)
  assert(root == want, ('root_dir is %s, expected %s'):format(client.root_dir, ws))
  wait_for('the user on_attach', function()
    return attached[broken]
  end)
  local caps = client.capabilities.workspace or {}
  assert(caps.codeLens and caps.codeLens.refreshSupport, 'codeLens.refreshSupport is not advertised')
  -- keymaps = { run = '<F5>', lens = false }: buffer-local, the rest of the defaults kept.
  local run_map = vim.fn.maparg('<F5>', 'n', false, true)
  assert(
    run_map.buffer == 1 and (run_map.desc or ''):find('Run now', 1, true),
    'no <F5> mapping: ' .. vim.inspect(run_map)
  )
  assert(vim.fn.maparg('<localleader>lm', 'n') ~= '', 'the default `make` mapping is missing')
  assert(vim.fn.maparg('<localleader>lc', 'n') == '', 'lens = false should drop its mapping')
  local info = client.server_info -- 0.10 does not keep it
  return ('%s, root %s'):format(info and (info.name .. ' ' .. info.version) or 'livenote', client.root_dir)
end)

check('inlay hints are enabled for the buffer', function()
  assert(vim.lsp.inlay_hint.is_enabled({ bufnr = broken }), 'inlay hints are off for broken.md')
  return 'enabled'
end)

check('diagnostics: an invalid live block (`active: yes`) is reported', function()
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
  assert(d.lnum == 4, ('at line %d, expected on `active: yes` (line 5)'):format(d.lnum + 1))
  return ('%d:%d %s'):format(d.lnum + 1, d.col + 1, d.message)
end)

check('status lens on the invalid note (fetched by the plugin on attach)', function()
  return wait_lens(broken, '^Invalid')
end)

local passive ---@type integer
check(':LiveMake turns a passive note live', function()
  passive = open('passive.md')
  local from = #notes
  ex('LiveMake')
  wait_for('`live:` and `objective:` in the buffer', function()
    return count_lines(passive, '^live:') == 1 and count_lines(passive, '^  objective:') == 1
  end, function()
    return text(passive)
  end)
  assert(lines(passive)[1] == '---', 'the frontmatter does not start the note:\n' .. text(passive))
  -- Saved, as a user would: the server lists and schedules notes as they are on disk.
  ex('silent write')
  local errs = problems_since(from)
  assert(#errs == 0, 'the editor showed: ' .. vim.inspect(errs))
  return (text(passive):gsub('\n', '⏎'))
end)

check('status lens: the new live note waits for trust (refreshed after the edit, unasked)', function()
  return wait_lens(passive, '^Waiting for trust$')
end)

check(':LiveTrust trusts the workspace; the lens turns "● Live · never run"', function()
  local from = #notes
  ex('LiveTrust')
  local m = wait_for('a "trusted" message', function()
    return message_since(from, 'trusted')
  end, function()
    return vim.inspect(notes)
  end)
  local trust_file_written = #vim.fn.globpath(data_dir, '**', true, true) > 0
  assert(trust_file_written, 'nothing was written under the test trust store ' .. data_dir)
  local lens = wait_lens(passive, '^● Live · never run')
  return m.msg .. '; ' .. lens
end)

check(':LiveRun <context> updates the body; the lens says "updated just now"', function()
  focus(passive)
  local from, refreshes = #notes, lens_refreshes
  ex('LiveRun milk is out')
  wait_for("the provider's text in the buffer", function()
    return count_lines(passive, '^updated by the test$') == 1
      and count_lines(passive, '^context: milk is out$') == 1
  end, function()
    return text(passive) .. '\nmessages: ' .. vim.inspect(notes)
  end)
  assert(
    lines(passive)[1] == '---' and count_lines(passive, '^# Groceries$') == 1,
    'the note lost its head:\n' .. text(passive)
  )
  local lens = wait_lens(passive, 'updated just now')
  local errs = problems_since(from)
  assert(#errs == 0, 'the editor showed: ' .. vim.inspect(errs))
  -- The lens followed the server's workspace/codeLens/refresh, and the user's global handler
  -- still got it.
  assert(lens_refreshes > refreshes, 'the global workspace/codeLens/refresh handler was not called')
  assert(
    via_plugin == lens_refreshes,
    ('%d of %d refresh requests bypassed the plugin'):format(lens_refreshes - via_plugin, lens_refreshes)
  )
  return ('%s (%d refresh requests, through the plugin)'):format(lens, lens_refreshes - refreshes)
end)

check(':LivePause / :LiveResume flip `active`; lens, hint and status follow', function()
  focus(passive)
  ex('LivePause')
  wait_for('`active: false` in the buffer', function()
    return count_lines(passive, '^  active: false$') == 1
  end, function()
    return text(passive)
  end)
  wait_lens(passive, '^Paused$')
  local hint = wait_for('a "paused" inlay hint', function()
    for _, l in ipairs(hint_labels(passive)) do
      if l:match('paused') then
        return l
      end
    end
  end, function()
    return vim.inspect(hint_labels(passive))
  end)
  local from = #notes
  ex('LiveStatus')
  local status = wait_for(':LiveStatus to answer', function()
    return message_since(from, 'passive.md')
  end, function()
    return vim.inspect(notes)
  end)
  assert(status.msg:lower():find('paused', 1, true), ':LiveStatus said ' .. status.msg)
  ex('LiveResume')
  wait_for('`active: true` in the buffer', function()
    return count_lines(passive, '^  active: true$') == 1
  end, function()
    return text(passive)
  end)
  local lens = wait_lens(passive, '^● Live')
  return ('hint %q, status %q, then %q'):format(hint, status.msg, lens)
end)

check(':LiveList fills the quickfix list with the live notes and opens it', function()
  ex('silent write') -- the list is of the notes as saved
  vim.fn.setqflist({}, 'f')
  ex('LiveList')
  local items = wait_for('quickfix entries', function()
    local qf = vim.fn.getqflist()
    return #qf > 0 and qf
  end)
  local qf_open = vim.fn.getqflist({ winid = 1 }).winid ~= 0
  local title = vim.fn.getqflist({ title = 1 }).title
  vim.cmd.cclose()
  focus(passive)
  assert(qf_open, 'the quickfix window is not open')
  local by_name = {}
  for _, it in ipairs(items) do
    local name = vim.api.nvim_buf_get_name(it.bufnr)
    assert(vim.uv.fs_realpath(name), 'entry for a file that does not exist: ' .. name)
    assert(
      vim.uv.fs_realpath(vim.fs.dirname(name)) == vim.uv.fs_realpath(ws),
      'entry outside the workspace: ' .. name
    )
    by_name[vim.fs.basename(name)] = it
  end
  local p, j = by_name['passive.md'], by_name['journal.md']
  assert(p and j, 'passive.md and journal.md should be listed: ' .. vim.inspect(vim.tbl_keys(by_name)))
  assert(p.text:find('live', 1, true) and p.text:find('updated just now', 1, true), 'passive.md: ' .. p.text)
  assert(j.text:find('never run', 1, true), 'journal.md: ' .. j.text)
  assert(p.lnum == 2, ('passive.md at line %d, expected its `live:` line 2'):format(p.lnum))
  assert(j.lnum == 2, ('journal.md at line %d, expected its `live:` line 2'):format(j.lnum))
  local shown = vim.tbl_map(function(it)
    return vim.fs.basename(vim.api.nvim_buf_get_name(it.bufnr)) .. ':' .. it.lnum .. ' ' .. it.text
  end, items)
  return title .. ' | ' .. table.concat(shown, ' | ')
end)

check(':LiveStop with nothing running says so', function()
  focus(passive)
  local from = #notes
  ex('LiveStop')
  local m = wait_for('an answer', function()
    return message_since(from, 'nothing to stop')
  end, function()
    return vim.inspect(notes)
  end)
  return m.msg
end)

check(':LiveUndo restores the body from before the run', function()
  focus(passive)
  ex('LiveUndo')
  wait_for("the provider's text to go", function()
    return count_lines(passive, '^updated by the test$') == 0 and count_lines(passive, '^%- milk$') == 1
  end, function()
    return text(passive) .. '\nmessages: ' .. vim.inspect(notes)
  end)
  return (text(passive):gsub('\n', '⏎'))
end)

check(':LivePassive removes the live block and keeps the body', function()
  focus(passive)
  ex('LivePassive')
  wait_for('no `live:` in the buffer', function()
    return count_lines(passive, '^live:') == 0
  end, function()
    return text(passive)
  end)
  assert(text(passive):match('# Groceries\n\n%- milk\n%- bread$'), 'the body changed:\n' .. text(passive))
  return (text(passive):gsub('\n', '⏎'))
end)

check('server errors are shown, not raised: :LivePause on a passive note', function()
  focus(passive)
  local from = #notes
  ex('LivePause')
  local m = wait_for('an error message', function()
    return message_since(from, 'Pause failed', vim.log.levels.ERROR)
  end, function()
    return vim.inspect(notes)
  end)
  return m.msg
end)

check(':help livenote resolves, and every |link| in the help file has a tag', function()
  focus(passive)
  -- helptags on a copy: the test must not leave a `tags` file in the checkout.
  local doc_copy = vim.fn.tempname() .. '-doc'
  vim.fn.mkdir(doc_copy .. '/doc', 'p')
  vim.fn.writefile(
    vim.fn.readfile(plugin_dir .. '/doc/livenote.txt', 'b'),
    doc_copy .. '/doc/livenote.txt',
    'b'
  )
  vim.cmd.helptags(vim.fn.fnameescape(doc_copy .. '/doc'))
  vim.opt.rtp:append(doc_copy)
  local wanted =
    { 'livenote', 'livenote-setup', ':LiveRun', ':LiveList', 'livenote-options', 'livenote-health' }
  for _, tag in ipairs(wanted) do
    local ok, err = pcall(vim.cmd.help, tag)
    assert(ok, (':help %s: %s'):format(tag, tostring(err)))
    assert(
      vim.api.nvim_buf_get_name(0):match('livenote%.txt$'),
      ':help ' .. tag .. ' opened ' .. vim.api.nvim_buf_get_name(0)
    )
  end
  -- Links to tags that exist nowhere show as plain text; catch typos. Links into Neovim's own
  -- help are checked where they can be: on 0.11+ (vim.lsp.config() is new there) with its
  -- help tags generated.
  local core_help = HAS_011 and pcall(vim.cmd.help, 'lsp-handler')
  local content = table.concat(vim.fn.readfile(plugin_dir .. '/doc/livenote.txt'), '\n')
  local bad = {}
  for link in content:gmatch('|([^|%s]+)|') do
    local ours = link:match('^livenote') or link:match('^:Live')
    if (ours or core_help) and not pcall(vim.cmd.help, link) then
      table.insert(bad, link)
    end
  end
  assert(#bad == 0, 'links without a tag: ' .. table.concat(bad, ', '))
  vim.cmd.helpclose()
  vim.api.nvim_set_current_buf(passive)
  return table.concat(wanted, ', ')
end)

check(':checkhealth livenote finds the binary and the attached client', function()
  focus(passive)
  vim.cmd('silent checkhealth livenote')
  local report = text(vim.api.nvim_get_current_buf())
  vim.cmd(HAS_011 and 'close' or 'bwipeout')
  assert(report:find('livenote 0', 1, true), 'no binary version in:\n' .. report)
  assert(report:find('client %d+: livenote'), 'no client in:\n' .. report)
  assert(not report:find('ERROR', 1, true), 'errors in:\n' .. report)
  return (report:match('(livenote %d+%.%d+%.%d+[^\n]*)') or '')
end)

check('shutdown: the server exits cleanly when Nvim stops it', function()
  local client = assert(vim.lsp.get_clients({ name = 'livenote' })[1], 'no livenote client')
  if HAS_011 then
    client:stop()
    wait_for('the server to exit', function()
      return server_exit
    end, nil, 5000)
    assert(server_exit.code == 0 and server_exit.signal == 0, 'exit ' .. vim.inspect(server_exit))
    return 'exit code 0'
  end
  client.stop()
  wait_for('the server to exit', function()
    return client.is_stopped()
  end, nil, 5000)
  return 'stopped'
end)

out(
  ('%d passed, %d failed'):format(passed, failed) .. (skipped > 0 and (', %d skipped'):format(skipped) or '')
)
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
