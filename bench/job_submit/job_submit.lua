--[[
job_submit.lua - the job_submit/gpuburst rules in Lua, for the benchmark only

bench/job_submit/run.sh loads this into job_submit/lua to compare with the
C plugin on the same jobs.  It implements the same rules (doc/
job_submit_gpuburst.md) for the configuration tests/data/plugin/gpuburst.yaml,
written out as tables below, as a site would write it by hand: GPU requests
parsed from tres_per_*, instance types in the constraint checked, the
home-region key validated and recorded in admin_comment, candidates
narrowed by type, model, GPUs per node, home and partition capacity, and
partition/features set when the user gave none.
--]]

local NODESETS = {
	{ name = "g5", type = "g5.xlarge", model = "a10g", gpus = 1, nodes = 4,
	  partition = "gpuburst", home = "ap-southeast-1", single = false },
	{ name = "g5q", type = "g5.12xlarge", model = "a10g", gpus = 4, nodes = 2,
	  partition = "gpuburst", home = "ap-southeast-1", single = false },
	{ name = "g6", type = "g6.xlarge", model = "l4", gpus = 1, nodes = 2,
	  partition = "gpuburst", home = "ap-southeast-1", single = false },
	{ name = "tokyo", type = "g6e.xlarge", model = "l40s", gpus = 1, nodes = 2,
	  partition = "tokyo", home = "ap-northeast-1", single = true },
}
local PARTITIONS = { "gpuburst", "tokyo" }
local FAMILIES = { g4dn = true, g5 = true, g5g = true, g6 = true, g6e = true }
local FAMILY_LIST = "g4dn, g5, g5g, g6, g6e"
local HOMES = { ["ap-southeast-1"] = true, ["ap-northeast-1"] = true,
		["ap-northeast-3"] = true }
local HOME_LIST = "ap-southeast-1, ap-northeast-1, ap-northeast-3"
local THRESHOLD, ENV = 2, "dev"
local ROUTE_GPU_JOBS = true

local function given(v)
	if v == nil or v == slurm.NO_VAL or v == slurm.NO_VAL16 or
	   v == 4294967295 or v == 65535 then
		return 0
	end
	return v
end

local function parse_count(s)
	local d, sfx = s:match("^(%d+)([kKmMgGtT]?)$")
	if not d then return nil end
	local m = ({ [""] = 1, k = 1024, K = 1024, m = 1048576, M = 1048576,
		     g = 1073741824, G = 1073741824, t = 1099511627776,
		     T = 1099511627776 })[sfx]
	return tonumber(d) * m
end

-- RET count, model, complex for one tres_per_* string
local function parse_gpus(tres)
	local count, model, complex, found = 0, nil, false, false
	if not tres then return 0, nil, false end
	for item in tres:gmatch("[^,]+") do
		local rest = item:gsub("^gres[:/]", "")
		local name, body = rest:match("^(gpu)([:=]?.*)$")
		if name and (body == "" or body:sub(1, 1) == ":" or body:sub(1, 1) == "=") then
			local c, m = 1, nil
			if body:sub(1, 1) == "=" then
				c = parse_count(body:sub(2))
			elseif body ~= "" then
				local b = body:sub(2)
				local t, n = b:match("^([^:=]+)[:=]([^:=]+)$")
				if t then
					m, c = t, parse_count(n)
				elseif parse_count(b) then
					c = parse_count(b)
				elseif b ~= "" and not b:match("^%d") and not b:find("[:=]") then
					m = b
				else
					c = nil
				end
			end
			if c ~= 0 then
				if c == nil or found or complex then
					complex, model = true, nil
					count = count + (c or 0)
				else
					count, model = c, m
				end
				found = true
			end
		end
	end
	return count, model, complex
end

local SIZES = { nano = true, micro = true, small = true, medium = true,
		large = true, xlarge = true, metal = true }

local function is_instance_type(s)
	local fam, size = s:match("^([a-z][a-z0-9-]*)%.([a-z0-9-]+)$")
	if not fam or not fam:find("%d") then return false end
	return SIZES[size] or size:match("^%d+xlarge$") ~= nil or
	       size:match("^metal%-[a-z0-9]+$") ~= nil
end

local function feature_names(features)
	local names = {}
	if features then
		for term in features:gmatch("[^&|,%(%)%[%] \t]+") do
			if term:sub(1, 1) ~= "!" then
				names[#names + 1] = term:gsub("%*.*$", "")
			end
		end
	end
	return names
end

local function find_home(comment)
	if not comment then return nil end
	local pos = 1
	while true do
		local s, e = comment:find("gpuburst:home=", pos, true)
		if not s then return nil end
		if s == 1 or comment:sub(s - 1, s - 1):match("[%s,;]") then
			return comment:sub(e + 1):match("^[^%s,;]*")
		end
		pos = e + 1
	end
end

local function job_need(j)
	local nodes = given(j.min_nodes)
	if nodes == 0 then nodes = 1 end
	local max_nodes = given(j.max_nodes)
	local tpn = given(j.ntasks_per_node)
	if tpn == 0 then tpn = 1 end
	local need = { nodes = nodes, per_node = 0, total = 0, gpu = false,
		       complex = false, model = nil }
	local function add(tres, kind)
		local c, m, cx = parse_gpus(tres)
		if c == 0 and not cx then return end
		need.gpu = true
		if cx or (need.model and m and need.model ~= m) then
			need.complex = true
			return
		end
		need.model = m or need.model
		local pn, total
		if kind == "job" then
			pn = max_nodes > 0 and math.ceil(c / max_nodes) or 1
			total = c
		elseif kind == "task" then
			pn = c * tpn
			local tasks = given(j.num_tasks)
			total = c * (tasks > 0 and tasks or tpn * nodes)
		else
			pn, total = c, c * nodes
		end
		need.per_node = math.max(need.per_node, pn)
		need.total = math.max(need.total, total)
	end
	add(j.tres_per_job, "job")
	add(j.tres_per_node, "node")
	add(j.tres_per_socket, "socket")
	add(j.tres_per_task, "task")
	if need.complex then need.model = nil end
	return need
end

local function reject(rc, msg)
	slurm.log_user("gpuburst: %s", msg)
	return rc
end

local function record_home(j, home)
	local old = j.admin_comment or ""
	old = old:gsub("%s*gpuburst:home=[^%s,;]*", ""):gsub("%s+$", "")
	if old ~= "" then old = old .. " " end
	j.admin_comment = old .. "gpuburst:home=" .. home
end

function slurm_job_submit(j, part_list, submit_uid)
	local listed, n_listed, n_other = {}, 0, 0
	if j.partition then
		for p in j.partition:gmatch("[^,]+") do
			local burst = false
			for _, bp in ipairs(PARTITIONS) do
				if p == bp then burst = true end
			end
			if burst then
				if not listed[p] then n_listed = n_listed + 1 end
				listed[p] = true
			else
				n_other = n_other + 1
			end
		end
	end
	local need = job_need(j)
	local names, types = feature_names(j.features), {}
	for _, n in ipairs(names) do
		if is_instance_type(n) then types[#types + 1] = n end
	end
	local named = j.partition ~= nil and j.partition ~= ""
	local ours = n_listed > 0 or (not named and ROUTE_GPU_JOBS and
				      (need.gpu or #types > 0))
	local home = find_home(j.comment)
	if not ours and not home then
		return slurm.SUCCESS
	end
	if ours then
		for _, t in ipairs(types) do
			if not FAMILIES[t:match("^[^.]+")] then
				return reject(slurm.ERROR, string.format(
					"instance type %s is not allowed: only GPU families %s",
					t, FAMILY_LIST))
			end
		end
	end
	if home and not HOMES[home] then
		return reject(slurm.ESLURM_ACCESS_DENIED, string.format(
			"home region %s is not in any fallback group: allowed home regions are %s",
			home ~= "" and home or "(empty)", HOME_LIST))
	end
	if ours then
		local fit, before = {}, 0
		for i, ns in ipairs(NODESETS) do
			fit[i] = n_listed == 0 or listed[ns.partition] == true
			if fit[i] then before = before + 1 end
		end
		local function narrow(keep)
			local left = 0
			for i, ns in ipairs(NODESETS) do
				if fit[i] and not keep(ns) then fit[i] = false end
				if fit[i] then left = left + 1 end
			end
			return left
		end
		local ok, rc, msg = true, nil, nil
		if #types > 0 and narrow(function(ns)
			for _, t in ipairs(types) do
				if t == ns.type then return true end
			end
			return false
		end) == 0 then
			ok, rc, msg = false, slurm.ERROR, "no burst nodeset provides the instance type asked for"
		elseif need.model and narrow(function(ns) return ns.model == need.model end) == 0 then
			ok, rc, msg = false, slurm.ERROR, "no burst nodeset has GPU model " .. need.model
		elseif not need.complex and narrow(function(ns) return ns.gpus >= need.per_node end) == 0 then
			ok, rc, msg = false, slurm.ERROR, string.format(
				"this job asks for %d GPUs per node, more than any burst nodeset has", need.per_node)
		elseif home and narrow(function(ns) return not ns.single or ns.home == home end) == 0 then
			ok, rc, msg = false, slurm.ERROR, "no burst nodeset can serve this home region"
		else
			local kept = 0
			for _, p in ipairs(PARTITIONS) do
				local nodes, gpus = 0, 0
				for i, ns in ipairs(NODESETS) do
					if fit[i] and ns.partition == p then
						nodes = nodes + ns.nodes
						gpus = gpus + ns.nodes * ns.gpus
					end
				end
				if nodes > 0 and nodes >= need.nodes and
				   (need.complex or gpus >= need.total) then
					kept = kept + 1
				else
					for i, ns in ipairs(NODESETS) do
						if ns.partition == p then fit[i] = false end
					end
				end
			end
			if kept == 0 then
				ok, rc, msg = false, slurm.ESLURM_INVALID_NODE_COUNT,
					"this job asks for more than the burst nodesets have"
			end
		end
		if not ok then
			if n_other == 0 then return reject(rc, msg) end
			ours = false
		else
			local after, parts, feats, seenp, seent = 0, {}, {}, {}, {}
			local best = nil
			for i, ns in ipairs(NODESETS) do
				if fit[i] then
					after = after + 1
					if not seenp[ns.partition] then
						parts[#parts + 1] = ns.partition
						seenp[ns.partition] = true
					end
					if not seent[ns.type] then
						feats[#feats + 1] = ns.type
						seent[ns.type] = true
					end
					if need.gpu and not need.complex and need.total > 0 then
						local n = math.ceil(need.total / ns.gpus)
						if not best or n < best then best = n end
					end
				end
			end
			if not named then j.partition = table.concat(parts, ",") end
			if (not j.features or j.features == "") and n_other == 0 and
			   after < before then
				j.features = table.concat(feats, "|")
			end
			local nodes = math.max(need.nodes, best or 1)
			if nodes > THRESHOLD then
				slurm.log_user("gpuburst: this job needs %d cloud nodes, more than the approval threshold of %d (%s): an administrator must approve it (gpuburstctl approvals approve) before its nodes start",
					       nodes, THRESHOLD, ENV)
			end
		end
	end
	if home then record_home(j, home) end
	return slurm.SUCCESS
end

function slurm_job_modify(j, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end

return slurm.SUCCESS
