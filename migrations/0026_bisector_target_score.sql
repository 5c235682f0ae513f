-- 0026: the bisector's event target (services/bisector/main.c).
-- The event's target: the alert with the largest |delta| / noise seen within
-- bisector.gather of the event's first alert (bisect.h pw_bisect_event_plan).
ALTER TABLE perfwatch.bisections ADD COLUMN target_score double precision NOT NULL DEFAULT 0;
COMMENT ON COLUMN perfwatch.bisections.target_score IS '|delta| / baseline noise of the target alert; a later alert of the event with a larger one becomes the target before the first job';
