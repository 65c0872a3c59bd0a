-- SQLite FTS5 equivalents of tests/bench/search_queries.txt, run in-process by
-- bench_search_fts5 (tests/bench/search_fts5.cc). "-- ID" starts a query's statements (one a
-- line, ending with ';'); all of them are timed together as that query. Schema: fts5(title,
-- body, comments, porter unicode61) whose rowid is issue.id; issue(id, key, repo, number,
-- state, type, author, created, updated, closed, comments) with indexes on repo, created,
-- updated, closed and comments; label(id, name) indexed by (name, id). Text is ranked by
-- bm25 with the title weighted 2 (as the Xapian index's title wdf), LIMIT 20, with a body
-- snippet; facets are GROUP BY over all matches (most frequent 10).
-- t01
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'nccl timeout' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- t02
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'cuda out of memory' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- t03
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'deadlock dataloader' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- t04
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'fsdp checkpoint resume' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- t05
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'quantization accuracy drop' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- t06
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'flashattention kernel' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- t07
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'gradient explosion fp16' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- t08
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'recompilation storm' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- t09
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'nan loss spike' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- p01
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH '"illegal memory access"' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- p02
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH '"out of memory"' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- p03
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH '"stack trace"' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- p04
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH '"sharded state dict"' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- p05
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH '"high latency"' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- p06
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH '"looks like a regression"' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- f01
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'segfault' AND EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name = 'bug') ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- f02
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'oom' AND i.state = 'open' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- f03
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'nccl' AND i.repo = 'github:pytorch/pytorch-c1' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- f04
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH '"illegal memory access"' AND i.state = 'closed' AND EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name = 'module: cuda') ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- f05
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'deadlock' AND i.type = 'pr' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- f06
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'quantization' AND NOT EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name = 'stale') ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- f07
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'timeout' AND i.author = 'alice' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- f08
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'memory leak' AND EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name IN ('bug', 'module: memory usage')) ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- d01
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'nccl' AND i.created >= 1672531200 AND i.created < 1704067200 ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- d02
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'oom' AND i.created >= 1704067200 ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- d03
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'crash' AND i.updated >= 1717200000 AND i.updated < 1719792000 ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- d04
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH '"out of memory"' AND i.created < 1577836800 ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- d05
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'segfault' AND i.created >= 1609459200 AND i.created < 1640995200 AND i.state = 'open' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- d06
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE i.closed >= 1640995200 AND i.closed < 1648771200 ORDER BY i.created DESC, i.number DESC LIMIT 20;
-- b01
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'torch' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- b02
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'error' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- b03
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'model' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- b04
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'cuda' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- b05
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'training' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- b06
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'python' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
-- s01
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'nccl' ORDER BY i.created DESC, i.number DESC LIMIT 20;
-- s02
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'oom' ORDER BY i.updated DESC, i.number DESC LIMIT 20;
-- s03
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'crash' ORDER BY i.comments DESC, i.number DESC LIMIT 20;
-- s04
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name = 'bug') ORDER BY i.created ASC, i.number ASC LIMIT 20;
-- s05
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'torch' ORDER BY i.updated DESC, i.number DESC LIMIT 20;
-- l01
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE i.repo = 'github:pytorch/pytorch-c1' AND i.state = 'open' ORDER BY i.created DESC, i.number DESC LIMIT 20;
-- l02
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name = 'bug') ORDER BY i.created DESC, i.number DESC LIMIT 20;
-- l03
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE i.type = 'pr' AND i.created >= 1672531200 ORDER BY i.created DESC, i.number DESC LIMIT 20;
-- l04
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name = 'module: cuda') AND i.state = 'closed' ORDER BY i.created DESC, i.number DESC LIMIT 20;
-- l05
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE i.comments > 5 ORDER BY i.created DESC, i.number DESC LIMIT 20;
-- x01
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'torch' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
SELECT i.repo AS v, count(*) AS n FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'torch' GROUP BY v ORDER BY n DESC, v LIMIT 10;
SELECT l.name, count(*) AS n FROM fts JOIN label l ON l.id = fts.rowid WHERE fts MATCH 'torch' GROUP BY l.name ORDER BY n DESC, l.name LIMIT 10;
SELECT i.state AS v, count(*) AS n FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'torch' GROUP BY v ORDER BY n DESC, v LIMIT 10;
-- x02
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'cuda' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
SELECT l.name, count(*) AS n FROM fts JOIN label l ON l.id = fts.rowid WHERE fts MATCH 'cuda' GROUP BY l.name ORDER BY n DESC, l.name LIMIT 10;
SELECT strftime('%Y', i.created, 'unixepoch') AS v, count(*) AS n FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'cuda' GROUP BY v ORDER BY n DESC, v LIMIT 10;
-- x03
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'error' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
SELECT i.repo AS v, count(*) AS n FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'error' GROUP BY v ORDER BY n DESC, v LIMIT 10;
SELECT i.type AS v, count(*) AS n FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'error' GROUP BY v ORDER BY n DESC, v LIMIT 10;
-- x04
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'training' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
SELECT i.state AS v, count(*) AS n FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'training' GROUP BY v ORDER BY n DESC, v LIMIT 10;
SELECT l.name, count(*) AS n FROM fts JOIN label l ON l.id = fts.rowid WHERE fts MATCH 'training' GROUP BY l.name ORDER BY n DESC, l.name LIMIT 10;
-- x05
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name = 'bug') ORDER BY i.created DESC, i.number DESC LIMIT 20;
SELECT i.repo AS v, count(*) AS n FROM issue i WHERE EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name = 'bug') GROUP BY v ORDER BY n DESC, v LIMIT 10;
SELECT i.state AS v, count(*) AS n FROM issue i WHERE EXISTS (SELECT 1 FROM label l WHERE l.id = i.id AND l.name = 'bug') GROUP BY v ORDER BY n DESC, v LIMIT 10;
-- x06
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE 1 ORDER BY i.created DESC, i.number DESC LIMIT 20;
SELECT i.repo AS v, count(*) AS n FROM issue i GROUP BY v ORDER BY n DESC, v LIMIT 10;
SELECT l.name, count(*) AS n FROM label l GROUP BY l.name ORDER BY n DESC, l.name LIMIT 10;
SELECT strftime('%Y', i.created, 'unixepoch') AS v, count(*) AS n FROM issue i GROUP BY v ORDER BY n DESC, v LIMIT 10;
-- x07
SELECT i.key, fts.title, snippet(fts, 1, '<mark>', '</mark>', '…', 24) FROM fts JOIN issue i ON i.id = fts.rowid WHERE fts MATCH 'oom' ORDER BY bm25(fts, 2.0, 1.0, 1.0) LIMIT 20;
SELECT l.name, count(*) AS n FROM fts JOIN label l ON l.id = fts.rowid WHERE fts MATCH 'oom' GROUP BY l.name ORDER BY n DESC, l.name LIMIT 10;
-- x08
SELECT i.key, f.title, substr(f.body, 1, 200) FROM issue i JOIN fts f ON f.rowid = i.id WHERE i.state = 'open' ORDER BY i.created DESC, i.number DESC LIMIT 20;
SELECT i.repo AS v, count(*) AS n FROM issue i WHERE i.state = 'open' GROUP BY v ORDER BY n DESC, v LIMIT 10;
SELECT l.name, count(*) AS n FROM label l JOIN issue i ON i.id = l.id WHERE i.state = 'open' GROUP BY l.name ORDER BY n DESC, l.name LIMIT 10;
