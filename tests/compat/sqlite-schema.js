#!/usr/bin/env node
// sqlite-schema.js: translates the postgrest-js suite's PostgreSQL schema and data into
// SQLite, at run time, for tests/compat/run.sh --sqlite.
//
//   node tests/compat/sqlite-schema.js SUITE_DIR/test/db/*.sql > schema.sqlite.sql
//
// The translation is mechanical (nothing of the suite is copied into sluice): it reads
// the files statement by statement and writes SQLite DDL and data on stdout, and on
// stderr one line per statement or part it had to leave out, with the reason.
//   - Tables of the first schema (public) only: sluice serves one schema on SQLite.
//   - Types: an identity or serial key is INTEGER PRIMARY KEY AUTOINCREMENT (as a
//     sequence, it never hands out a deleted row's number again); bigint/int integer;
//     json/jsonb keep their name (sluice renders them as JSON); an array is json (its
//     values as a JSON array, as PostgREST renders an array); an enum is text with a
//     CHECK of its labels; int4range and int8range keep their name (their text as
//     PostgreSQL prints it, which sluice's range operators read); other ranges,
//     tsvector and other types unknown to SQLite are text (their operators answer 400
//     on SQLite); decimal(p,s) numeric.  Casts (::type)
//     and schema prefixes are dropped.
//   - Foreign keys keep their names: ALTER TABLE ... ADD CONSTRAINT n FOREIGN KEY is
//     folded into its table's CREATE TABLE as a named table constraint.
//   - ARRAY[...] values become their JSON array's text; a 'text'::tsvector value the
//     text PostgreSQL prints for it (its lexemes sorted, once each, quoted).
//   - Views are kept when their body is plain SQL (schema prefixes dropped).
//   - SQL functions whose body is one SELECT, or one INSERT, UPDATE or DELETE with its
//     RETURNING, returning a scalar, a table's rows or a TABLE(...) or void become rows
//     of sluice_functions (docs/postgrest.md), parameters written :name, literal
//     defaults kept; other functions (PL/pgSQL, several statements, computed fields)
//     cannot exist on SQLite and are reported.
//   - Publications, extensions, comments, REPLICA IDENTITY: nothing to translate.
'use strict';

const fs = require('fs');

// Splits SQL text into statements: ';' outside quotes, dollar quotes and comments.
function statements(text) {
	const out = [];
	let cur = '', i = 0;
	while (i < text.length) {
		const c = text[i];
		if (c === '-' && text[i + 1] === '-') {
			while (i < text.length && text[i] !== '\n')
				i++;
			continue;
		}
		if (c === '\'' || c === '"') {
			let j = i + 1;
			while (j < text.length) {
				if (text[j] === c && text[j + 1] === c) { j += 2; continue; }
				if (text[j] === c) break;
				j++;
			}
			cur += text.slice(i, j + 1);
			i = j + 1;
			continue;
		}
		if (c === '$') {
			const m = /^\$[A-Za-z_]*\$/.exec(text.slice(i));
			if (m) {
				const end = text.indexOf(m[0], i + m[0].length);
				const j = end < 0 ? text.length : end + m[0].length;
				cur += text.slice(i, j);
				i = j;
				continue;
			}
		}
		if (c === ';') {
			if (cur.trim() !== '')
				out.push(cur.trim());
			cur = '';
			i++;
			continue;
		}
		cur += c;
		i++;
	}
	if (cur.trim() !== '')
		out.push(cur.trim());
	return out;
}

// Splits s at commas outside parentheses and quotes.
function topSplit(s) {
	const parts = [];
	let depth = 0, q = null, cur = '';
	for (const c of s) {
		if (q) {
			if (c === q) q = null;
		} else if (c === '\'' || c === '"') {
			q = c;
		} else if (c === '(') {
			depth++;
		} else if (c === ')') {
			depth--;
		} else if (c === ',' && depth === 0) {
			parts.push(cur.trim());
			cur = '';
			continue;
		}
		cur += c;
	}
	if (cur.trim() !== '')
		parts.push(cur.trim());
	return parts;
}

// The text between the parenthesis at open and its match.
function inParens(s, open) {
	let depth = 0, q = null;
	for (let i = open; i < s.length; i++) {
		const c = s[i];
		if (q) {
			if (c === q) q = null;
		} else if (c === '\'' || c === '"') {
			q = c;
		} else if (c === '(') {
			depth++;
		} else if (c === ')' && --depth === 0) {
			return { inner: s.slice(open + 1, i), end: i + 1 };
		}
	}
	return null;
}

const ident = '(?:"[^"]+"|[A-Za-z_][A-Za-z0-9_]*)';
const qname = `((?:${ident}\\.)?${ident})`;

// Schema and name of a possibly qualified name; unquoted names fold to lower case.
function splitName(n) {
	const parts = n.match(new RegExp(ident, 'g')).map((p) =>
		p[0] === '"' ? p.slice(1, -1) : p.toLowerCase());
	return parts.length === 2 ? { schema: parts[0], name: parts[1] } :
		{ schema: 'public', name: parts[0] };
}

function quoteIdent(n) {
	return /^[a-z_][a-z0-9_]*$/.test(n) ? n : '"' + n.replace(/"/g, '""') + '"';
}

// Drops casts (::type, ::schema.type, ::type(p,s), ::type[]) and the public. prefix
// outside string literals.
function plainSql(s) {
	let out = '', q = null;
	for (let i = 0; i < s.length; i++) {
		const c = s[i];
		if (q) {
			out += c;
			if (c === q) q = null;
			continue;
		}
		if (c === '\'' || c === '"') {
			q = c;
			out += c;
			continue;
		}
		const rest = s.slice(i);
		let m = /^::[A-Za-z_][A-Za-z0-9_.]*(\([0-9, ]*\))?(\[\])?/.exec(rest);
		if (m) {
			i += m[0].length - 1;
			continue;
		}
		m = /^public\./i.exec(rest);
		if (m && !/[A-Za-z0-9_]/.test(s[i - 1] || ' ')) {
			i += m[0].length - 1;
			continue;
		}
		out += c;
	}
	return out;
}

// ARRAY['a', 'b'] as the text of its JSON array.
function arrays(s) {
	return s.replace(/ARRAY\s*\[([^\]]*)\]/gi, (all, inner) => {
		const items = topSplit(inner).map((v) => {
			const t = /^'((?:[^']|'')*)'$/.exec(v);
			return t ? JSON.stringify(t[1].replace(/''/g, '\'')) : v;
		});
		return '\'' + JSON.stringify(items.map((v) =>
			v[0] === '"' ? JSON.parse(v) : Number(v))).replace(/'/g, '\'\'') + '\'';
	});
}

// 'fat cat'::tsvector as PostgreSQL prints it: 'cat' 'fat' (lexemes without positions).
function tsvectors(s) {
	return s.replace(/'((?:[^']|'')*)'::tsvector/gi, (all, v) => {
		const words = [...new Set(v.replace(/''/g, '\'').split(/\s+/).filter((w) => w))];
		if (words.some((w) => /[':\\]/.test(w)))
			return all;
		words.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
		return '\'' + words.map((w) => `''${w}''`).join(' ') + '\'';
	});
}

const enums = new Map();		// "schema.name" -> labels
const tables = new Map();		// name -> { cols: [], cons: [] }
const order = [];			// table and view names in creation order
const views = new Map();
const funcs = [];
const inserts = [];
function skip(what, why) {
	process.stderr.write(`sqlite-schema: left out ${what}: ${why}\n`);
}
function short(st) {
	return st.replace(/\s+/g, ' ').slice(0, 60);
}

// A column's SQLite type and constraints for PostgreSQL's "type constraints...".
function column(def, schema, ftsCols) {
	const m = new RegExp(`^(${ident})\\s+(.*)$`, 's').exec(def);
	const name = splitName(m[1]).name;
	let rest = m[2];
	const t = /^((?:[A-Za-z_][A-Za-z0-9_]*\.)?[A-Za-z_][A-Za-z0-9_]*(?:\s+precision|\s+varying)?)(\s*\([^)]*\))?(\s*\[\])?/i.exec(rest);
	let type = t[1].toLowerCase();
	const isArray = !!t[3];
	rest = rest.slice(t[0].length);
	const identity = /generated\s+(by\s+default|always)\s+as\s+identity/i.test(rest);
	rest = rest.replace(/generated\s+(by\s+default|always)\s+as\s+identity/i, '');
	const pk = /primary\s+key/i.test(rest);
	let check = '';
	const tn = splitName(type.includes('.') ? type : `${schema}.${type}`);
	const en = enums.get(`${tn.schema}.${tn.name}`) || enums.get(`public.${tn.name}`);
	let note = null;
	if (isArray) {
		type = 'json';
		note = 'an array: json, its values as a JSON array';
	} else if (en) {
		type = 'text';
		check = ` check (${quoteIdent(name)} in (${en.map((l) => `'${l}'`).join(', ')}))`;
	} else if (/^(serial|bigserial|smallserial)$/.test(type) || (identity && pk)) {
		type = 'integer';
		rest = rest.replace(/primary\s+key/i, 'primary key autoincrement');
	} else if (/^(int|int2|int4|int8|bigint|smallint|integer)$/.test(type)) {
		type = 'integer';
	} else if (/^(decimal|numeric)$/.test(type)) {
		type = 'numeric';
	} else if (/^(real|float4|float8|double precision)$/.test(type)) {
		type = 'real';
	} else if (/^(json|jsonb|boolean|date|timestamp|timestamptz)$/.test(type)) {
		// Names sluice reads on SQLite as it does on PostgreSQL.
	} else if (/^(text|varchar|character varying|uuid)$/.test(type)) {
		type = 'text';
	} else if (/^(int4range|int8range)$/.test(type)) {
		// Kept: sluice reads an integer range's text with PostgreSQL's operators.
	} else if (type === 'tsvector') {
		note = 'tsvector: text, the lexemes as PostgreSQL prints them, searched through ' +
		    'the FTS5 table TABLE_fts';
		type = 'text';
		ftsCols.push(name);
	} else {
		note = `type ${type} has no SQLite counterpart: text`;
		type = 'text';
	}
	if (note)
		skip(`the type of column ${name}`, note);
	// "null" as a constraint is PostgreSQL's, not SQLite's.
	rest = plainSql(rest).replace(/(^|\s)null(?=\s|$)/gi, (all, sp, off, str) =>
		/(not|default)\s*$/i.test(str.slice(0, off + sp.length)) ? all : sp);
	return `${quoteIdent(name)} ${type}${rest.replace(/\s+/g, ' ').trimEnd()}${check}`;
}

function createTable(st) {
	const m = new RegExp(`^create\\s+table\\s+${qname}\\s*\\(`, 'is').exec(st);
	const n = splitName(m[1]);
	if (n.schema !== 'public')
		return skip(`table ${n.schema}.${n.name}`, 'SQLite serves one schema (public)');
	const body = inParens(st, m[0].length - 1).inner;
	const t = { cols: [], cons: [], fts: [] };
	for (const def of topSplit(body)) {
		if (/^(constraint|primary\s+key|foreign\s+key|unique|check)\b/i.test(def))
			t.cons.push(plainSql(def).replace(/\s+/g, ' '));
		else
			t.cols.push(column(def, n.schema, t.fts));
	}
	tables.set(n.name, t);
	order.push(n.name);
}

function alterTable(st) {
	const m = new RegExp(`^alter\\s+table\\s+(?:only\\s+)?${qname}\\s+add\\s+(constraint\\s+.*)$`,
	    'is').exec(st);
	if (!m) {
		if (!/replica\s+identity/i.test(st))
			skip(`"${short(st)}"`, 'SQLite cannot alter a table so');
		return;
	}
	const n = splitName(m[1]);
	const t = tables.get(n.name);
	if (n.schema !== 'public' || !t)
		return skip(`"${short(st)}"`, 'its table is not translated');
	t.cons.push(plainSql(m[2]).replace(/\s+/g, ' '));
}

function createType(st) {
	const m = new RegExp(`^create\\s+type\\s+${qname}\\s+as\\s+enum\\s*\\((.*)\\)$`, 'is').exec(st);
	if (!m)
		return skip(`"${short(st)}"`, 'only enums are translated (as text with a CHECK)');
	const n = splitName(m[1]);
	enums.set(`${n.schema}.${n.name}`, topSplit(m[2]).map((l) => l.slice(1, -1)));
}

function createView(st) {
	const m = new RegExp(`^create\\s+(?:or\\s+replace\\s+)?view\\s+${qname}\\s+as\\s+(.*)$`,
	    'is').exec(st);
	const n = splitName(m[1]);
	if (n.schema !== 'public')
		return skip(`view ${n.schema}.${n.name}`, 'SQLite serves one schema (public)');
	views.set(n.name, plainSql(m[2]).replace(/\s+/g, ' '));
	order.push(n.name);
}

function createFunction(st) {
	const m = new RegExp(`^create\\s+(?:or\\s+replace\\s+)?function\\s+${qname}\\s*\\(`, 'is')
	    .exec(st);
	const n = splitName(m[1]);
	const what = `function ${n.schema}.${n.name}`;
	if (n.schema !== 'public')
		return skip(what, 'SQLite serves one schema (public)');
	const p = inParens(st, m[0].length - 1);
	const tail = st.slice(p.end);
	const r = /^\s*returns\s+(setof\s+)?(.*?)\s+(?:as|language)\s/is.exec(tail);
	const body = /\$([A-Za-z_]*)\$([\s\S]*?)\$\1\$|\bas\s+'((?:[^']|'')*)'/i.exec(tail);
	const lang = /language\s+([A-Za-z]+)/i.exec(tail);
	const vol = /\b(immutable|stable|volatile)\b/i.exec(tail.replace(/\$([A-Za-z_]*)\$[\s\S]*?\$\1\$/, ''));
	if (!r || !body || !lang || lang[1].toLowerCase() !== 'sql')
		return skip(what, 'not an SQL function');
	const args = [];
	for (const a of topSplit(p.inner)) {
		const am = new RegExp(`^(${ident})\\s+(.*)$`, 's').exec(a);
		if (!am)
			return skip(what, 'an argument without a name: it takes a row (a computed field)');
		if (/^(out|inout|variadic)$/i.test(am[1]))
			return skip(what, 'its arguments have modes (OUT, INOUT, VARIADIC)');
		// A default is a literal in sluice_functions ("s text default ''").
		const dm = /^(.*?)\s*(?:\bdefault\b|=)\s*(.*)$/is.exec(am[2]);
		const type = (dm ? dm[1] : am[2]).trim();
		let dflt = '';
		if (dm) {
			const lit = plainSql(dm[2].trim());
			if (!/^('(?:[^']|'')*'|null|-?[0-9]+(\.[0-9]+)?)$/i.test(lit) || lit.includes(','))
				return skip(what, `the default of ${am[1]} is no literal`);
			dflt = ` default ${lit}`;
		}
		// An array argument is its JSON text, as an array column.
		args.push({ name: splitName(am[1]).name,
		    type: (/\[\]/.test(type) ? 'json' : type.toLowerCase()) + dflt });
	}
	let returns = r[2].trim();
	let sql = (body[2] !== undefined ? body[2] : body[3].replace(/''/g, '\'')).trim()
	    .replace(/;\s*$/, '');
	const rt = /^table\s*\((.*)\)$/is.exec(returns);
	if (rt) {
		// RETURNS TABLE(a type, ...): sluice_functions' "table(a type, ...)", an enum
		// being text.
		const cols = [];
		for (const c of topSplit(rt[1])) {
			const cm = new RegExp(`^(${ident})\\s+(.*)$`, 's').exec(c);
			if (!cm)
				return skip(what, 'a RETURNS TABLE column without a type');
			const tn = splitName(cm[2].trim());
			const en = enums.has(`${tn.schema}.${tn.name}`) || enums.has(`public.${tn.name}`);
			cols.push(`${splitName(cm[1]).name} ${en ? 'text' : cm[2].trim().toLowerCase()}`);
		}
		returns = `table(${cols.join(', ')})`;
	}
	// A void function that does nothing: a SELECT that does nothing.
	if (/^void$/i.test(returns) && sql === '')
		sql = 'select null';
	if (args.some((a) => !/^[a-z_][a-z0-9_]*$/.test(a.name)) || /\$[0-9]/.test(sql))
		return skip(what, 'it takes a row or refers to arguments by position (a computed field)');
	// One SELECT, or one INSERT, UPDATE or DELETE (... RETURNING): a function that
	// writes, which sluice runs before the call's SELECT.
	if (!/^(select|insert|update|delete)\b/i.test(sql) || sql.includes(';'))
		return skip(what, 'its body is not one statement');
	const rn = rt ? null : splitName(returns);
	if (r[1]) {
		if (!tables.has(rn.name))
			return skip(what, `returns rows of ${returns}, which is not translated`);
		returns = `setof ${rn.name}`;
	} else if (rt) {
		// the columns above
	} else if (/^void$/i.test(returns)) {
		returns = 'void';
	} else if (tables.has(rn.name)) {
		returns = rn.name;
	} else if (enums.has(`${rn.schema}.${rn.name}`) || enums.has(`public.${rn.name}`)) {
		returns = 'text';
	} else {
		returns = returns.toLowerCase();
	}
	// In an SQL function a column's name wins over an argument's: such a body cannot
	// be rewritten by names alone.
	const clash = args.find((a) => [...tables.values()].some((t) =>
		t.cols.some((c) => c.split(' ')[0] === quoteIdent(a.name))));
	if (clash)
		return skip(what, `its argument ${clash.name} is also a column's name`);
	for (const a of args)
		sql = sql.replace(new RegExp(`(^|[^A-Za-z0-9_:.'"])${a.name}(?![A-Za-z0-9_])`, 'g'),
		    `$1:${a.name}`);
	funcs.push({
		name: n.name,
		args: args.map((a) => `${a.name} ${a.type}`).join(', '),
		returns,
		volatility: vol ? vol[1].toLowerCase() : 'volatile',
		body: plainSql(sql).replace(/\s+/g, ' '),
	});
}

function insert(st) {
	const m = new RegExp(`^insert\\s+into\\s+${qname}`, 'is').exec(st);
	const n = splitName(m[1]);
	if (n.schema !== 'public' || !tables.has(n.name))
		return skip(`the rows of ${n.schema}.${n.name}`, 'their table is not translated');
	inserts.push(arrays(plainSql(tsvectors(st))));
}

// The FTS5 table sluice searches a tsvector column's text through (docs/postgrest.md):
// NAME_fts over NAME's rows (external content, the same rowids, the english
// configuration's stemming as FTS5's porter tokenizer), kept by three triggers.
function ftsTable(name, cols) {
	const f = quoteIdent(`${name}_fts`), t = quoteIdent(name);
	const c = cols.map(quoteIdent).join(', ');
	const v = (row) => cols.map((n) => `${row}.${quoteIdent(n)}`).join(', ');
	const del = `insert into ${f}(${f}, rowid, ${c}) values ('delete', old.rowid, ${v('old')});`;
	const ins = `insert into ${f}(rowid, ${c}) values (new.rowid, ${v('new')});`;
	return [`create virtual table ${f} using fts5(${c}, content=${lit(name)}, ` +
	    'tokenize=\'porter unicode61\');',
	    `create trigger ${quoteIdent(`${name}_fts_ai`)} after insert on ${t} begin ${ins} end;`,
	    `create trigger ${quoteIdent(`${name}_fts_ad`)} after delete on ${t} begin ${del} end;`,
	    `create trigger ${quoteIdent(`${name}_fts_au`)} after update on ${t} begin ${del} ${ins} end;`];
}

const lit = (s) => '\'' + s.replace(/'/g, '\'\'') + '\'';

for (const file of process.argv.slice(2)) {
	for (const st of statements(fs.readFileSync(file, 'utf8'))) {
		const head = st.replace(/\s+/g, ' ').toLowerCase();
		if (head.startsWith('create table'))
			createTable(st);
		else if (head.startsWith('alter table'))
			alterTable(st);
		else if (head.startsWith('create type'))
			createType(st);
		else if (/^create (or replace )?view/.test(head))
			createView(st);
		else if (/^create (or replace )?function/.test(head))
			createFunction(st);
		else if (head.startsWith('insert into'))
			insert(st);
		else if (/^(comment on|create publication|create schema|create extension)/.test(head))
			continue;
		else
			skip(`"${short(st)}"`, 'no SQLite counterpart');
	}
}

const out = ['-- Translated from the postgrest-js suite\'s schema by tests/compat/sqlite-schema.js.',
	'pragma foreign_keys = on;', 'begin;'];
for (const name of order) {
	if (tables.has(name)) {
		const t = tables.get(name);
		out.push(`create table ${quoteIdent(name)} (\n\t${t.cols.concat(t.cons).join(',\n\t')}\n);`);
		if (t.fts.length)
			out.push(...ftsTable(name, t.fts));
	} else {
		out.push(`create view ${quoteIdent(name)} as ${views.get(name)};`);
	}
}
out.push('create table sluice_functions (name text primary key, args text not null default \'\', ' +
    'returns text not null, volatility text not null default \'volatile\', body text not null);');
for (const f of funcs)
	out.push(`insert into sluice_functions values (${[f.name, f.args, f.returns, f.volatility,
	    f.body].map(lit).join(', ')});`);
for (const st of inserts)
	out.push(st + ';');
out.push('commit;');
process.stdout.write(out.join('\n') + '\n');
