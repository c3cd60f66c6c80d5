-- Finishing an agent's work (issue 39): the pull request (GitHub), merge request (GitLab) or pull
-- request (Forgejo / Gitea) Healer opened for a task's branch, where it is, and what was pushed.
-- The token it was opened with is in the secrets keep, never here.
CREATE TABLE pull_requests (
    project_id      INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_id         TEXT NOT NULL,
    host            TEXT NOT NULL CHECK (host IN ('github', 'gitlab', 'forgejo')),
    api_url         TEXT NOT NULL,
    number          INTEGER NOT NULL,
    url             TEXT NOT NULL,           -- its page on the host
    state           TEXT NOT NULL CHECK (state IN ('open', 'merged', 'closed')),
    pushed_commit   TEXT NOT NULL,           -- what the branch on the remote holds, as Healer pushed it
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (project_id, task_id)
);
