-- bench/chat.lua: the request mix of the Litestar+SQLite vs FastAPI+Postgres benchmark
-- (the Starcord chat), for wrk:
--
--   BENCH_READ_PCT=95 BENCH_SKEW=0.1 SEED_CHANNEL_COUNT=512 SEED_USER_COUNT=1024 \
--       wrk -t4 -c1000 -d60s --latency -s bench/chat.lua http://127.0.0.1:8080
--
-- BENCH_READ_PCT percent of the requests are GET / (default 95); the rest are writes:
-- 80% POST /chat/message-send with 1..127 'a', 10% POST /chat/channel-open of channel
-- c_%08d whose rank is drawn from the benchmark's Zipf approximation with alpha BENCH_SKEW
-- (rounded, in 1..SEED_CHANNEL_COUNT), 10% POST /chat/nickname-set to a random u_%08d
-- (1..SEED_USER_COUNT).  Every request carries Accept-Encoding: br (BENCH_ACCEPT_ENCODING
-- overrides it: the page cache's scenario sends a browser's "gzip, deflate, br") and
-- Datastar-Request: true, POSTs a JSON content type.  The server must run its chat endpoints with
-- bench_sessions=SEED_USER_COUNT so that each request acts as a random seeded user.

local read_pct = tonumber(os.getenv("BENCH_READ_PCT") or "95")
local alpha = tonumber(os.getenv("BENCH_SKEW") or "0.1")
local channels = tonumber(os.getenv("SEED_CHANNEL_COUNT") or "4096")
local users = tonumber(os.getenv("SEED_USER_COUNT") or "8192")

local accept_encoding = os.getenv("BENCH_ACCEPT_ENCODING") or "br"

local get_headers = { ["Accept-Encoding"] = accept_encoding, ["Datastar-Request"] = "true" }
local post_headers = {
	["Accept-Encoding"] = accept_encoding,
	["Datastar-Request"] = "true",
	["Content-Type"] = "application/json",
}

local threads = {}
local counter = 0

function setup(thread)
	counter = counter + 1
	thread:set("id", counter)
	table.insert(threads, thread)
end

function init(args)
	math.randomseed(os.time() * 1000 + (id or 0))
	writes, reads, bad = 0, 0, 0
end

-- zipf_rank of the seeder, with the uniform draw from math.random and rounding.
local function zipf_rank(count, a)
	local p = 1 - a
	local r = (1 + math.random() * (count ^ p - 1)) ^ (1 / p)
	r = math.floor(r + 0.5)
	if r < 1 then r = 1 end
	if r > count then r = count end
	return r
end

function request()
	if math.random(100) <= read_pct then
		reads = reads + 1
		return wrk.format("GET", "/", get_headers)
	end
	writes = writes + 1
	local k = math.random(100)
	if k <= 80 then
		return wrk.format("POST", "/chat/message-send", post_headers,
		    '{"messageSend":"' .. string.rep("a", math.random(127)) .. '"}')
	elseif k <= 90 then
		return wrk.format("POST", "/chat/channel-open", post_headers,
		    string.format('{"channelOpen":"c_%08d"}', zipf_rank(channels, alpha)))
	end
	return wrk.format("POST", "/chat/nickname-set", post_headers,
	    string.format('{"nicknameSet":"u_%08d"}', math.random(users)))
end

function response(status, headers, body)
	if status >= 400 then
		bad = bad + 1
	end
end

function done(summary, latency, requests)
	local r, w, b = 0, 0, 0
	for _, t in ipairs(threads) do
		r = r + (t:get("reads") or 0)
		w = w + (t:get("writes") or 0)
		b = b + (t:get("bad") or 0)
	end
	io.write(string.format("chat mix: %d reads, %d writes, %d responses >= 400\n", r, w, b))
end
