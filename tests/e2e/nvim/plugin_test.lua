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

-- The harness shared with test.lua (watchdog, messages and prompts, check, wait_for, open, the
-- LSP log on failure), loaded from beside this file.
local here = vim.fn.fnamemodify(arg[0], ':p:h')
local H = dofile(here .. '/harness.lua')
H.traceback = true -- a failed check shows where in the plugin it failed
H.wait_initialized = true -- the checks read the client's state right after open()
local check, wait_for, open = H.check, H.wait_for, H.open
local lines, text, count_lines = H.lines, H.text, H.count_lines
local lens_titles, find_lens, hint_labels = H.lens_titles, H.find_lens, H.hint_labels
local notes, problems_since = H.notes, H.problems_since
local HAS_011 = vim.fn.has('nvim-0.11') == 1

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

-- The plugin, from this checkout, and nothing else.
local repo = vim.fn.fnamemodify(here, ':h:h:h')
local plugin_dir = repo .. '/editors/nvim'
vim.opt.rtp:prepend(plugin_dir)

-- A scratch copy of the fixture workspace (removed when Nvim exits); a new user's (empty)
-- trust list, kept out of the real one.
local ws = H.copy_workspace(here .. '/plugin-workspace')
local data_dir = vim.fn.tempname() .. '-data'
-- `lsp --log-file` is newer than this test: with an older binary the session runs without
-- `log_file` and only the command line is checked.
local server_bin = vim.env.LIVENOTE_BIN or 'livenote'
local help = vim.fn.executable(server_bin) == 1 and vim.system({ server_bin, 'lsp', '--help' }, { text = true }):wait(10000)
local log_file = help and (help.stdout or ''):find('--log-file', 1, true) and (vim.fn.tempname() .. '-server.log') or nil

--- The command setup() registered: vim.lsp.config's on 0.11, what config.server_cmd() builds on
--- 0.10 (whose vim.lsp.start() config is not kept anywhere to read).
local function registered_cmd()
  if HAS_011 then
    return vim.lsp.config.livenote.cmd
  end
  local config = require('livenote.config')
  return config.server_cmd(config.current)
end

-------------------------------------------------------------------------------------------------
-- Helpers (the shared ones are in harness.lua)

--- Wait for a lens matching `pattern`, without asking for a refresh: the plugin must keep the
--- lenses current by itself.
local function wait_lens(buf, pattern, what)
  return wait_for(what or ('a lens matching %q'):format(pattern), function()
    return find_lens(buf, pattern)
  end, function()
    return vim.inspect(lens_titles(buf))
  end)
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

--- Run an Ex command as ex() does and wait for the message it brings: the first one matching
--- `pattern` (plain text), at `level` or above.
local function ex_answer(cmdline, what, pattern, level)
  local from = #notes
  ex(cmdline)
  return wait_for(what, function()
    return message_since(from, pattern, level)
  end, function()
    return vim.inspect(notes)
  end)
end

-------------------------------------------------------------------------------------------------
-- The checks

H.header()

local attached = {} ---@type table<integer, boolean>

check('lsp/livenote.lua (for nvim-lspconfig) starts the server as the plugin does', function()
  -- The file nvim-lspconfig would carry, and Neovim 0.11 reads from 'runtimepath': the same
  -- command, filetypes and root markers as the plugin's defaults.
  local spec = dofile(plugin_dir .. '/lsp/livenote.lua')
  local defaults = require('livenote.config').defaults()
  for _, key in ipairs({ 'cmd', 'filetypes', 'root_markers' }) do
    assert(
      vim.deep_equal(spec[key], defaults[key]),
      key .. ': ' .. vim.inspect(spec[key]) .. ' ~= ' .. vim.inspect(defaults[key])
    )
  end
  if HAS_011 then
    -- Merged into vim.lsp.config by name, from the plugin folder on 'runtimepath'.
    local merged = vim.lsp.config.livenote
    assert(vim.deep_equal(merged.root_markers, spec.root_markers), vim.inspect(merged))
  end
  return table.concat(spec.cmd, ' ')
end)

check('setup: bad options fail at setup, naming the option', function()
  local ok, err = pcall(require('livenote').setup, { inlay_hints = 'yes' })
  assert(not ok, 'setup accepted inlay_hints = "yes"')
  assert(tostring(err):find('inlay_hints', 1, true), 'the error does not name the option: ' .. tostring(err))
  return tostring(err)
end)

check('setup: log_file adds --log-file <absolute path> to the command', function()
  require('livenote').setup({ cmd = { 'livenote', 'lsp' }, log_file = '~/livenote-test.log' })
  local cmd = registered_cmd()
  local want = { 'livenote', 'lsp', '--log-file', vim.fs.normalize('~') .. '/livenote-test.log' }
  assert(vim.deep_equal(cmd, want), vim.inspect(cmd))
  return table.concat(cmd, ' ')
end)

check('setup: the plugin from editors/nvim registers the server and the :Live* commands', function()
  local lua_dirs = vim.api.nvim_get_runtime_file('lua/livenote/init.lua', true)
  assert(
    #lua_dirs == 1 and lua_dirs[1]:find(plugin_dir, 1, true) == 1,
    'livenote loaded from ' .. vim.inspect(lua_dirs)
  )
  require('livenote').setup({
    cmd = { server_bin, 'lsp' },
    log_file = log_file,
    cmd_env = { LIVENOTE_DATA_DIR = data_dir },
    on_attach = function(_, bufnr)
      attached[bufnr] = true
    end,
    keymaps = { run = '<F5>', lens = false },
  })
  if HAS_011 then
    -- A user's own vim.lsp.config('livenote') merges with the plugin's (here: to see the exit).
    vim.lsp.config('livenote', { on_exit = H.on_exit })
  end
  -- Setting up again replaces the command: nothing of the previous log_file is left over.
  local want = log_file and { server_bin, 'lsp', '--log-file', log_file } or { server_bin, 'lsp' }
  assert(vim.deep_equal(registered_cmd(), want), vim.inspect(registered_cmd()))
  local commands = {
    'LiveRun',
    'LiveStop',
    'LiveMake',
    'LiveAsk',
    'LivePause',
    'LiveResume',
    'LivePassive',
    'LiveUndo',
    'LiveClearMemory',
    'LiveTrust',
    'LiveList',
    'LiveHistory',
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
  H.assert_root(client)
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
  local d = H.wait_diagnostic(broken, 'live/wrong-type')
  assert(d.lnum == 4, ('at line %d, expected on `active: yes` (line 5)'):format(d.lnum + 1))
  return ('%d:%d %s'):format(d.lnum + 1, d.col + 1, d.message)
end)

check('status lens on the invalid note (fetched by the plugin on attach)', function()
  return wait_lens(broken, '^Invalid')
end)

local passive ---@type integer
--- Answer the next vim.ui.input with `answer` (the harness dismisses prompts otherwise);
--- returns a function that says what was asked.
local function answer_input(answer)
  local asked
  local dismiss = vim.ui.input
  vim.ui.input = function(opts, on_confirm)
    vim.ui.input = dismiss
    asked = opts and opts.prompt
    on_confirm(answer)
  end
  return function()
    return asked
  end
end

check(':LiveMake asks what to keep current; an empty answer makes the note live from the template', function()
  passive = open('passive.md')
  local from = #notes
  local asked = answer_input('')
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
  assert(asked() and asked():find('keep current', 1, true), 'not asked: ' .. tostring(asked()))
  return (text(passive):gsub('\n', '⏎'))
end)

--- The inlay hints of `buf` as the server answers them now (asked here, not the ones Neovim
--- fetched last), "line:label" each.
local function hints_now(buf)
  local client = assert(H.client_of(buf), 'no livenote client')
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    range = { start = { line = 0, character = 0 }, ['end'] = { line = vim.api.nvim_buf_line_count(buf), character = 0 } },
  }
  local res = HAS_011 and client:request_sync('textDocument/inlayHint', params, H.WAIT_MS, buf)
    or client.request_sync('textDocument/inlayHint', params, H.WAIT_MS, buf)
  assert(res and not res.err, 'inlayHint: ' .. vim.inspect(res))
  return vim.tbl_map(function(h)
    return ('%d:%s'):format(h.position.line, type(h.label) == 'string' and h.label or vim.inspect(h.label))
  end, res.result or {})
end

check('status lens: the new live note waits for trust (refreshed after the edit, unasked)', function()
  local lens = wait_lens(passive, '^Waiting for trust$')
  -- Neovim draws the lens and the hints of the `live:` line side by side: the status is said
  -- by the lens alone, not again by a hint ("waiting for trust Waiting for trust").
  local hints = hints_now(passive)
  for _, h in ipairs(hints) do
    assert(not h:lower():find('waiting for trust', 1, true), 'said twice, by a hint too: ' .. vim.inspect(hints))
  end
  return lens
end)

check(':LiveTrust trusts the workspace; the lens turns "● Live · never run"', function()
  local m = ex_answer('LiveTrust', 'a "trusted" message', 'trusted')
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
  -- The command line does not keep saying "updating passive.md…": the run's end follows it.
  local ended = wait_for('the run\'s end said after "updating"', function()
    return message_since(from, 'passive.md: updated')
  end, function()
    return vim.inspect(notes)
  end)
  assert(notes[#notes].msg == ended.msg or not notes[#notes].msg:find('updating', 1, true), vim.inspect(notes))
  -- The buffer was clean before the run (saved above): the plugin wrote the run to disk with
  -- it, so the buffer is not modified (`:q` would not stop at E37) and the file has the run.
  local path = vim.api.nvim_buf_get_name(passive)
  wait_for('the run written to disk, the buffer clean', function()
    return not vim.bo[passive].modified and table.concat(vim.fn.readfile(path), '\n') == text(passive)
  end, function()
    return ('modified: %s\nbuffer:\n%s\ndisk:\n%s'):format(
      vim.bo[passive].modified,
      text(passive),
      table.concat(vim.fn.readfile(path), '\n')
    )
  end)
  local errs = problems_since(from)
  assert(#errs == 0, 'the editor showed: ' .. vim.inspect(errs))
  -- The lens followed the server's workspace/codeLens/refresh, and the user's global handler
  -- still got it. Waited for, not looked at once: the lens above can come from the plugin's own
  -- request after the buffer changed, before the server's refresh for the run's end arrives
  -- (one run in seven on a loaded machine got here first).
  wait_for('the global workspace/codeLens/refresh handler called', function()
    return lens_refreshes > refreshes
  end, function()
    return ('%d refresh requests before the run, %d now'):format(refreshes, lens_refreshes)
  end)
  assert(
    via_plugin == lens_refreshes,
    ('%d of %d refresh requests bypassed the plugin'):format(lens_refreshes - via_plugin, lens_refreshes)
  )
  return ('%s; %q (%d refresh requests, through the plugin)'):format(lens, ended.msg, lens_refreshes - refreshes)
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
  local status = ex_answer('LiveStatus', ':LiveStatus to answer', 'passive.md')
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

check(':LiveList qf fills the quickfix list with the live notes and opens it', function()
  ex('silent write') -- the list is of the notes as saved
  vim.fn.setqflist({}, 'f')
  ex('LiveList qf')
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

check(':LiveList offers the live notes through vim.ui.select; the chosen one opens at `live:`', function()
  focus(passive)
  local select = vim.ui.select
  local offered ---@type string[]?
  -- A picker of the user's would show these; this one takes journal.md.
  vim.ui.select = function(items, opts, on_choice)
    offered = vim.tbl_map(opts.format_item, items)
    for _, item in ipairs(items) do
      if item.path == 'journal.md' then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  local ok, err = pcall(ex, 'LiveList')
  local opened = ok
    and wait_for('journal.md opened from the picker', function()
      return vim.fs.basename(vim.api.nvim_buf_get_name(0)) == 'journal.md' and vim.api.nvim_get_current_buf()
    end, function()
      return vim.inspect(offered) .. '\ncurrent: ' .. vim.api.nvim_buf_get_name(0)
    end)
  vim.ui.select = select
  assert(ok, err)
  local line = vim.api.nvim_win_get_cursor(0)[1]
  focus(passive)
  pcall(vim.api.nvim_buf_delete, opened, {})
  -- Every live note, in the quickfix list's words, sorted by path.
  assert(offered and #offered == 3, 'offered: ' .. vim.inspect(offered))
  assert(offered[1]:find('^broken%.md: invalid'), 'broken.md offered as: ' .. offered[1])
  assert(offered[3]:find('^passive%.md: ● live · updated just now'), 'passive.md offered as: ' .. offered[3])
  assert(line == 2, ('journal.md opened at line %d, expected its `live:` line 2'):format(line))
  return table.concat(offered, ' | ')
end)

check(':LiveHistory lists the runs of the note; <CR> on one opens its diff in a new tab', function()
  focus(passive)
  local history ---@type integer?
  ex('LiveHistory')
  local buf = wait_for('the history buffer', function()
    local b = vim.api.nvim_get_current_buf()
    return vim.bo[b].filetype == 'livenote-history' and b
  end, function()
    return vim.inspect(notes)
  end)
  history = buf
  local shown = lines(buf)
  assert(shown[1]:find('^Runs of passive%.md'), 'heading: ' .. shown[1])
  assert(#shown == 2 and shown[2]:find(' · manual · done · %+%d+ %-%d+ · '), 'runs: ' .. vim.inspect(shown))
  assert(vim.api.nvim_win_get_cursor(0)[1] == 2, 'the cursor is not on the newest run')
  local tab = vim.api.nvim_get_current_tabpage()
  vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
  local diff_tab = wait_for('a new tab page with the diff', function()
    local t = vim.api.nvim_get_current_tabpage()
    return t ~= tab and #vim.api.nvim_tabpage_list_wins(t) == 2 and t
  end, function()
    return vim.inspect(notes)
  end)
  local sides = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(diff_tab)) do
    assert(vim.wo[win].diff, 'a window of the diff is not in diff mode')
    table.insert(sides, text(vim.api.nvim_win_get_buf(win)))
  end
  vim.cmd.tabclose()
  vim.api.nvim_set_current_tabpage(tab)
  pcall(vim.api.nvim_buf_delete, history, { force = true })
  focus(passive)
  assert(sides[1]:find('- milk', 1, true) and not sides[1]:find('updated by the test', 1, true), 'before: ' .. sides[1])
  assert(sides[2]:find('updated by the test\ncontext: milk is out', 1, true), 'after: ' .. sides[2])
  return shown[2] .. ' | before ' .. (sides[1]:gsub('\n', '⏎')) .. ' | after ' .. (sides[2]:gsub('\n', '⏎'))
end)

check(':LiveStop with nothing running says so', function()
  focus(passive)
  return ex_answer('LiveStop', 'an answer', 'nothing to stop').msg
end)

check(':LiveClearMemory deletes the memory the run saved; again, says there is none', function()
  focus(passive)
  local memory_files = function()
    return vim.fn.glob(ws .. '/.livenote/memory/*.json', true, true)
  end
  assert(#memory_files() == 1, 'the run saved no memory: ' .. vim.inspect(memory_files()))
  local cleared = ex_answer('LiveClearMemory', 'an answer', 'cleared the agent memory of passive.md')
  assert(#memory_files() == 0, 'the memory is still there: ' .. vim.inspect(memory_files()))
  local none = ex_answer('LiveClearMemory', 'an answer', 'passive.md has no agent memory')
  return cleared.msg .. ' | ' .. none.msg
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
  return ex_answer('LivePause', 'an error message', 'Pause failed', vim.log.levels.ERROR).msg
end)

check(':LiveMake with a sentence: no model here (a command provider), so the sentence is the objective and a warning says why', function()
  focus(passive)
  local from = #notes
  local asked = answer_input('  what to buy this week ')
  ex('LiveMake')
  wait_for('the sentence as the objective', function()
    return count_lines(passive, '^  objective: "what to buy this week"$') == 1
  end, function()
    return text(passive) .. '\nmessages: ' .. vim.inspect(notes)
  end)
  assert(asked(), 'vim.ui.input was not asked')
  local warned = wait_for('the template warning', function()
    return message_since(from, 'made live from the template', vim.log.levels.WARN)
  end)
  ex('silent write')
  return warned.msg
end)

check('a run into a buffer with unsaved changes keeps the run unsaved too; the disk stays as it was', function()
  local journal = open('journal.md')
  local path = vim.api.nvim_buf_get_name(journal)
  local before = vim.fn.readfile(path)
  -- The user types and does not save.
  vim.api.nvim_buf_set_lines(journal, -1, -1, false, { 'typed, not saved' })
  ex('LiveRun unsaved')
  wait_for("the provider's text in the buffer", function()
    return count_lines(journal, '^context: unsaved$') == 1
  end, function()
    return text(journal) .. '\nmessages: ' .. vim.inspect(notes)
  end)
  wait_lens(journal, 'updated just now')
  assert(vim.bo[journal].modified, 'the buffer with unsaved changes was written')
  local disk = vim.fn.readfile(path)
  assert(vim.deep_equal(disk, before), 'the file on disk changed:\n' .. table.concat(disk, '\n'))
  -- As the user may: throw the changes (and the run) away.
  ex('silent edit!')
  return ('disk unchanged, buffer modified (%d lines)'):format(#disk)
end)

check('a run another livenote process writes reaches the clean buffer and its lens, without :checktime', function()
  local journal = open('journal.md')
  assert(not vim.bo[journal].modified, 'journal.md has unsaved changes')
  local path = vim.api.nvim_buf_get_name(journal)
  -- `livenote run` in a shell, as `livenote watch` winning the race would: it writes the file.
  local env = { LIVENOTE_DATA_DIR = data_dir, LIVENOTE_LOG = 'warn' }
  local done = vim.system({ server_bin, 'run', 'journal.md' }, { cwd = ws, env = env, text = true }):wait(H.WAIT_MS)
  assert(done.code == 0, 'livenote run: ' .. vim.inspect(done))
  assert(table.concat(vim.fn.readfile(path), '\n'):find('context: none', 1, true), 'the run is not on disk')
  wait_for('the buffer to show the run', function()
    return count_lines(journal, '^context: none$') == 1
  end, function()
    return text(journal)
  end)
  assert(not vim.bo[journal].modified, 'the reloaded buffer is modified')
  return wait_lens(journal, 'updated just now')
end)

check('`u` after a scheduled run into the buffer: the run is no failure to retry', function()
  -- A new note due at once (never run), saved while open: the server's scheduler runs it into
  -- the buffer, and the plugin writes the run with it (the buffer was clean).
  vim.cmd.edit(vim.fn.fnameescape(ws .. '/yearly.md'))
  local yearly = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(yearly, 0, -1, false, {
    '---',
    'live:',
    '  objective: A note filled once a year.',
    '  triggers:',
    '    cronExpr: "0 0 1 1 *"',
    '---',
    '# Yearly',
    '',
    'old body',
  })
  -- An interactive Neovim closes the undo block each time it waits for input, so every
  -- workspace/applyEdit is an undo step of its own; `nvim -l` never waits for input, so here
  -- the undo sequence is broken after each edit the same way (|undo-break|).
  local break_undo = function()
    vim.cmd('let &undolevels = &undolevels')
  end
  break_undo()
  local apply = vim.lsp.handlers['workspace/applyEdit']
  vim.lsp.handlers['workspace/applyEdit'] = function(...)
    local result = apply(...)
    break_undo()
    return result
  end
  -- Open in the server before the note exists on disk: its run then edits the buffer.
  wait_for('livenote to attach to yearly.md', function()
    return H.client_of(yearly)
  end)
  -- The server has the text (0.10 sends changes debounced), so the run's text is the saved one.
  wait_lens(yearly, '^● Live · never run')
  ex('silent write')
  wait_for('the scheduled run in the buffer, written', function()
    return count_lines(yearly, '^updated by the test$') == 1
      and count_lines(yearly, '^  lastRunAt: ') == 1
      and not vim.bo[yearly].modified
  end, function()
    local log = log_file and table.concat(vim.fn.readfile(log_file), '\n'):sub(-4000) or ''
    return text(yearly) .. '\nmessages: ' .. vim.inspect(notes) .. '\nserver log:\n' .. log
  end)
  wait_lens(yearly, 'updated just now')
  vim.lsp.handlers['workspace/applyEdit'] = apply
  vim.cmd('silent undo')
  assert(count_lines(yearly, '^old body$') == 1, 'undo did not bring the body back:\n' .. text(yearly))
  assert(count_lines(yearly, '^  lastAttemptAt: ') == 1, 'lastAttemptAt went too:\n' .. text(yearly))
  local hints = hints_now(yearly)
  for _, h in ipairs(hints) do
    assert(not h:find('retry', 1, true), 'an undone run reads as a failure to retry: ' .. vim.inspect(hints))
  end
  local lens = wait_lens(yearly, '^● Live · updated just now')
  -- Leave nothing behind for the checks after this one.
  ex('bwipeout!')
  os.remove(ws .. '/yearly.md')
  return ('%s; hints %s'):format(lens, table.concat(hints, ', '))
end)

-------------------------------------------------------------------------------------------------
-- Ask livenote and livenote/notify (issue 33). The checks that go through the server need its
-- livenote.ask and livenote/notify.

--- The messages since `from` that are the answer to a question: not the "asking about" line.
local function answer_since(from)
  for i = from + 1, #notes do
    local n = notes[i]
    if n.msg:find('^livenote: ') and not n.msg:find('^livenote: asking about ') then
      return n
    end
  end
end

--- Ask and wait for the answer; an "Ask failed" fails the check with the server's message.
local function wait_answer(from, what)
  local n = wait_for(what, function()
    return answer_since(from)
  end, function()
    return vim.inspect(notes)
  end)
  assert(not n.msg:find('Ask failed', 1, true), n.msg)
  assert(n.level >= vim.log.levels.INFO, vim.inspect(n))
  return n
end

check('the client declares experimental.livenote.ask and .notify; livenote.ask is the plugin\'s own command', function()
  local journal = open('journal.md')
  local client = assert(H.client_of(journal), 'no client')
  local exp = (client.capabilities or client.config.capabilities or {}).experimental or {}
  local ln = exp.livenote or {}
  assert(ln.ask == true and ln.notify == true and ln.notesChanged == true, vim.inspect(exp))
  assert(vim.lsp.commands['livenote.ask'] == require('livenote.ask').on_command, 'vim.lsp.commands["livenote.ask"] is not the plugin\'s')
  assert(client.handlers and client.handlers['livenote/notify'] == require('livenote.ask').on_notify, 'no livenote/notify handler')
  return vim.inspect(ln)
end)

check('livenote/notify: the message through vim.notify, WARN when a run failed, nothing without a message', function()
  local journal = open('journal.md')
  local handler = H.client_of(journal).handlers['livenote/notify']
  local from = #notes
  handler(nil, { message = 'Journal changed: 3 lines added', digest = false, notes = { { outcome = 'changed' } } }, {})
  handler(nil, { message = '2 notes changed', digest = true, notes = { { outcome = 'changed' }, { outcome = 'failed' } } }, {})
  handler(nil, { digest = false, notes = {} }, {})
  local got = {}
  for i = from + 1, #notes do
    table.insert(got, { notes[i].msg, notes[i].level })
  end
  local want = {
    { 'livenote: Journal changed: 3 lines added', vim.log.levels.INFO },
    { 'livenote: 2 notes changed', vim.log.levels.WARN },
  }
  assert(vim.deep_equal(got, want), vim.inspect(got))
  return #got .. ' messages'
end)

check(':LiveAsk <sentence> sends it to the server for the current note; no model here (a command provider), so the reply says so, as a warning', function()
  focus(open('journal.md'))
  local from = #notes
  ex('LiveAsk why did it not run this morning?')
  local n = wait_answer(from, 'the reply')
  assert(n.level == vim.log.levels.WARN, 'the no-model reply is not a warning: ' .. vim.inspect(n))
  return n.msg
end)

check(':LiveAsk without a sentence asks with vim.ui.input; a cancelled or empty answer sends nothing', function()
  focus(open('journal.md'))
  local from = #notes
  local asked = answer_input(nil)
  ex('LiveAsk')
  assert(asked(), 'vim.ui.input was not asked')
  asked = answer_input('   ')
  ex('LiveAsk')
  assert(asked(), 'vim.ui.input was not asked again')
  vim.wait(300)
  assert(answer_since(from) == nil and not message_since(from, 'asking about'), vim.inspect(notes))
  asked = answer_input('what did the last run change?')
  ex('LiveAsk')
  assert(asked():find('journal.md', 1, true), 'the prompt does not name the note: ' .. tostring(asked()))
  return wait_answer(from, 'the reply').msg
end)

check('the server offers "Ask livenote…" as a code action; its one-argument command asks for the sentence here', function()
  local journal = open('journal.md')
  focus(journal)
  local client = H.client_of(journal)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(journal) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
    context = { diagnostics = {} },
  }
  local res
  if HAS_011 then
    res = client:request_sync('textDocument/codeAction', params, H.WAIT_MS, journal)
  else
    ---@diagnostic disable-next-line: param-type-mismatch
    res = client.request_sync('textDocument/codeAction', params, H.WAIT_MS, journal)
  end
  assert(res and not res.err, vim.inspect(res))
  local action
  for _, a in ipairs(res.result or {}) do
    if a.title == 'Ask livenote…' then
      action = a
    end
  end
  assert(action, 'no "Ask livenote…" among ' .. vim.inspect(vim.tbl_map(function(a)
    return a.title
  end, res.result or {})))
  local command = action.command and (type(action.command) == 'table' and action.command or action) or action
  assert(command.command == 'livenote.ask' and #command.arguments == 1, vim.inspect(action))
  local from = #notes
  local asked = answer_input('keep an eye on the pollen count too')
  -- What vim.lsp.buf.code_action() does with the chosen action's command.
  vim.lsp.commands[command.command](command, { bufnr = journal, client_id = client.id })
  assert(asked(), 'vim.ui.input was not asked')
  return wait_answer(from, 'the reply').msg
end)

check('a run of a note with `notify: all` brings livenote/notify, shown with vim.notify', function()
  local journal = open('journal.md')
  focus(journal)
  local client = H.client_of(journal)
  local seen ---@type table?
  local handler = client.handlers['livenote/notify']
  client.handlers['livenote/notify'] = function(err, params, ctx)
    seen = params
    return handler(err, params, ctx)
  end
  vim.api.nvim_buf_set_lines(journal, 2, 2, false, { '  notify: all' })
  ex('silent write')
  local from = #notes
  ex('LiveRun told')
  wait_for('livenote/notify', function()
    return seen ~= nil
  end, function()
    return vim.inspect(notes)
  end, 3 * H.WAIT_MS)
  client.handlers['livenote/notify'] = handler
  assert(type(seen.message) == 'string' and seen.message ~= '', vim.inspect(seen))
  local uris = vim.tbl_map(function(n)
    return n.uri
  end, seen.notes or {})
  assert(vim.tbl_contains(uris, vim.uri_from_bufnr(journal)), vim.inspect(seen))
  local shown = wait_for('the message', function()
    return message_since(from, seen.message)
  end)
  return shown.msg
end)

check(':help livenote resolves from the shipped doc/tags, and every |link| in the help file has a tag', function()
  focus(passive)
  -- The plugin folder as a plugin manager installs it, with no :helptags run: the committed
  -- doc/tags is what answers (without it, E149).
  local wanted = {
    'livenote',
    'livenote-setup',
    'livenote-install',
    ':LiveRun',
    ':LiveList',
    ':LiveHistory',
    'livenote-options',
    'livenote-health',
  }
  for _, tag in ipairs(wanted) do
    local ok, err = pcall(vim.cmd.help, tag)
    assert(ok, (':help %s: %s'):format(tag, tostring(err)))
    assert(
      vim.fn.resolve(vim.api.nvim_buf_get_name(0)) == vim.fn.resolve(plugin_dir .. '/doc/livenote.txt'),
      ':help ' .. tag .. ' opened ' .. vim.api.nvim_buf_get_name(0)
    )
  end
  -- The shipped tags are current: :helptags on a copy of the help file (the test must not
  -- write into the checkout) writes the same file.
  local doc_copy = vim.fn.tempname() .. '-doc'
  vim.fn.mkdir(doc_copy .. '/doc', 'p')
  vim.fn.writefile(
    vim.fn.readfile(plugin_dir .. '/doc/livenote.txt', 'b'),
    doc_copy .. '/doc/livenote.txt',
    'b'
  )
  vim.cmd.helptags(vim.fn.fnameescape(doc_copy .. '/doc'))
  local fresh = vim.fn.readfile(doc_copy .. '/doc/tags', 'b')
  local shipped = vim.fn.readfile(plugin_dir .. '/doc/tags', 'b')
  assert(
    vim.deep_equal(fresh, shipped),
    'editors/nvim/doc/tags is not what :helptags writes for doc/livenote.txt; regenerate it: '
      .. "nvim --headless --clean -c 'helptags editors/nvim/doc' -c q"
  )
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

check('log_file: the server appends its log to the file', function()
  if not log_file then
    return 'skipped: ' .. server_bin .. ' lsp has no --log-file'
  end
  local log = table.concat(vim.fn.readfile(log_file), '\n')
  assert(log:find('indexed %d+ note'), 'no "indexed N notes" in ' .. log_file .. ':\n' .. log)
  return log_file
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

-- setup() without `settings` sends an empty Lua table, which JSON-encodes as `[]`: the server
-- must read that as "no settings", not warn the user at every start (checked last, once every
-- message of the session has arrived).
check('no complaint about the (empty) settings the plugin sent', function()
  local complaints = vim.tbl_filter(function(n)
    return n.msg:find('livenote settings', 1, true) ~= nil
  end, notes)
  assert(#complaints == 0, 'the server complained about the settings: ' .. vim.inspect(complaints))
  return 'none'
end)

check('shutdown: the server exits cleanly when Nvim stops it', H.shutdown)

H.finish()
