-- A loop or a judgement that put a message in a session's mailbox points at it, so its entry
-- on the timeline says whether the message still waits or was delivered, and how.
ALTER TABLE steering_events ADD COLUMN message_id INTEGER REFERENCES steering_messages (id) ON DELETE SET NULL;
