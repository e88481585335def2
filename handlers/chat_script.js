/*
 * chat_script.js: the Starcord chat page's script (handlers/chat_page.html), served by
 * bin/chat_script at /chat/script.js, into which it is embedded at build time.
 *
 * Progressive enhancement: the page works without it (each form posts to its write
 * endpoint, which answers 303 back to /).  With it, a form's submit is sent with fetch()
 * as the JSON body {FIELD: value} (the field's name is the key), and the page changes in
 * place: a sent message appears at once (the list is fetched right after the 204), a
 * refused value shows its reason next to its field (the 422's _nicknameSetError, or the
 * error's message), and opening a channel loads the page anew.  Every second, while the
 * page is visible, GET /chat/messages?channel=NAME&after=ID fetches the current channel's
 * messages newer than the last one shown, and they are appended; the list stays at the
 * newest message when it was there.  Text from the server only ever goes into
 * textContent, never into markup.
 */
(function () {
	'use strict';
	var list = document.getElementById('message-list');
	var box = document.getElementById('messages');
	var main = document.querySelector('main');
	var channel = main ? main.getAttribute('data-channel') : '';
	var polling = false, timer = 0;

	/* The list scrolls in column-reverse (the page opens at the newest message even
	 * without script): scrollTop 0 is the newest end, and older messages are above it. */
	function atBottom() {
		return Math.abs(box.scrollTop) < 80;
	}
	function toBottom() {
		box.scrollTop = 0;
	}
	function lastId() {
		var last = list.lastElementChild;
		return last ? last.id.replace('message-', '') : '0';
	}
	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined)
			e.textContent = text;
		return e;
	}
	function add(m) {
		if (document.getElementById('message-' + m.id))
			return;
		var iso = new Date(m.ts * 1000).toISOString();
		var a = el('article', 'message'), h = el('header', 'message-header');
		var t = el('time', 'message-time', iso.slice(0, 10) + ' ' + iso.slice(11, 16));
		a.id = 'message-' + m.id;
		a.appendChild(el('div', 'message-avatar', Array.from(m.nick)[0] || ''));
		a.lastChild.setAttribute('aria-hidden', 'true');
		h.appendChild(el('span', 'message-author', m.nick));
		h.appendChild(document.createTextNode('\n'));
		t.setAttribute('datetime', iso.slice(0, 19) + 'Z');
		h.appendChild(t);
		a.appendChild(h);
		a.appendChild(el('p', 'message-content', m.content));
		list.appendChild(a);
	}
	function poll(stick) {
		if (polling || !list)
			return Promise.resolve();
		polling = true;
		var url = '/chat/messages?channel=' + encodeURIComponent(channel) +
		    '&after=' + encodeURIComponent(lastId());
		var down = stick || atBottom();
		return fetch(url, { credentials: 'same-origin', cache: 'no-store' })
		    .then(function (r) { return r.ok ? r.json() : { messages: [] }; })
		    .then(function (j) {
			j.messages.forEach(add);
			if (down && j.messages.length)
				toBottom();
		    })
		    .catch(function () {})
		    .then(function () { polling = false; });
	}
	function schedule() {
		clearTimeout(timer);
		timer = setTimeout(function () {
			if (document.hidden)
				return;
			poll(false).then(schedule);
		}, 1000);
	}
	function fields(form, submitter) {
		var o = {};
		Array.prototype.forEach.call(form.elements, function (e) {
			if (e.name && e.tagName === 'INPUT')
				o[e.name] = e.value;
		});
		if (submitter && submitter.name)
			o[submitter.name] = submitter.value;
		return o;
	}
	function send(form, submitter) {
		var err = form.querySelector('.error'), ok = form.querySelector('.ok');
		var body = fields(form, submitter);
		if (err)
			err.textContent = '';
		if (ok)
			ok.textContent = '';
		return fetch(form.getAttribute('action'), {
			method: 'POST', credentials: 'same-origin',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify(body)
		}).then(function (r) {
			/* The body is read even when empty: chromium counts an unread 204 as
			 * an aborted request. */
			if (r.ok)
				return r.text().then(function () { return { ok: true }; });
			return r.json().catch(function () { return {}; }).then(function (j) {
				return { ok: false, error: j._nicknameSetError || j.message ||
				    'Not sent (' + r.status + ').' };
			});
		}).catch(function () {
			return { ok: false, error: 'The server cannot be reached.' };
		}).then(function (res) {
			if (!res.ok && err)
				err.textContent = res.error;
			return res;
		});
	}
	document.addEventListener('submit', function (ev) {
		var form = ev.target, kind = form.getAttribute('data-kind');
		if (!kind)
			return;
		ev.preventDefault();
		send(form, ev.submitter).then(function (res) {
			if (!res.ok)
				return;
			if (kind === 'message') {
				form.reset();
				poll(true);
			} else if (kind === 'channel') {
				location.assign('/');
			} else if (kind === 'nickname') {
				var ok = form.querySelector('.ok');
				if (ok)
					ok.textContent = 'Saved.';
			}
		});
	});
	document.addEventListener('visibilitychange', function () {
		if (!document.hidden)
			poll(false).then(schedule);
	});
	if (box)
		toBottom();
	schedule();
})();
