// Running a collective's schedule (schedule.h): to the end in the caller
// (a blocking collective), or as a request that every poll of the engine
// moves on (a nonblocking one).
#include <cstring>

#include "engine/engine.h"

namespace tagwire::engine {

namespace {

RequestKind kind_of(Schedule::Step::Kind kind) {
  return kind == Schedule::Step::Kind::kSend ? RequestKind::kSend : RequestKind::kReceive;
}

}  // namespace

Status Engine::start_round(const Schedule& schedule, std::size_t round,
                           std::vector<Request*>* posted) {
  for (const auto& step : schedule.round(round)) {
    if (step.kind == Schedule::Step::Kind::kLocal) {
      TAGWIRE_RETURN_IF_ERROR(step.local());
      continue;
    }
    if (step.kind == Schedule::Step::Kind::kCopy) {
      std::memmove(step.buffer, step.from, step.bytes);
      continue;
    }
    auto r = post_collective_locked(kind_of(step.kind), step.buffer, step.bytes, step.peer,
                                    step.tag, schedule.comm(), step.remote);
    if (!r) return r.status();  // a dead member, most likely
    posted->push_back(*r);
  }
  return Status::ok();
}

Status Engine::run_schedule(Schedule& schedule) {
  std::vector<Request*> posted;
  for (std::size_t i = 0; i < schedule.round_count(); ++i) {
    posted.clear();
    posted.reserve(schedule.round(i).size());
    Status started;
    {
      EngineGuard lock(mutex_);
      started = start_round(schedule, i, &posted);
    }
    // What the round posted ends before the schedule's scratch goes, even
    // when a step failed (the scratch is the caller's, and a receive may be
    // writing it; with a dead member those steps fail at once too,
    // peer_failure.cc). Only the first error matters: no statuses to fill.
    Status waited = wait_all(
        posted, [](void*, std::size_t, const MessageStatus&) {}, nullptr);
    TAGWIRE_RETURN_IF_ERROR(started);
    TAGWIRE_RETURN_IF_ERROR(waited);
  }
  return Status::ok();
}

Request* Engine::schedule_request(Communicator* comm) {
  Request* r = new_request(RequestKind::kSchedule);
  r->comm = comm;
  r->collective = true;
  // Its steps have peers and fail with a dead one (depends_on); the
  // schedule itself ends with their error, so it depends on no rank.
  r->peer = kProcNull;
  return r;
}

void Engine::launch(Request* r, std::unique_ptr<Schedule> schedule) {
  r->set_phase(RequestPhase::kRunning);
  r->started_ms = clock_ms_.load(std::memory_order_relaxed);
  r->status = empty_status();
  auto run = std::make_unique<ScheduleRun>();
  run->schedule = std::move(schedule);
  run->request = r;
  // Its first round starts now, as a nonblocking call's operation should.
  if (!advance(*run)) schedules_.push_back(std::move(run));
}

Result<Request*> Engine::start_schedule(std::unique_ptr<Schedule> schedule) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(schedule->comm()));
  EngineGuard lock(mutex_);
  Request* r = schedule_request(schedule->comm());
  launch(r, std::move(schedule));
  return r;
}

Result<Request*> Engine::schedule_init(Communicator* comm, ScheduleBuilder build) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  EngineGuard lock(mutex_);
  Request* r = schedule_request(comm);
  r->persistent = true;  // inactive until start()
  schedule_builders_[r] = std::move(build);
  return r;
}

Status Engine::restart_schedule(Request* r) {
  ScheduleBuilder build;
  {
    EngineGuard lock(mutex_);
    if (!r->persistent) return {ErrorCode::kInvalidRequest, "start of a non-persistent request"};
    if (r->active()) return {ErrorCode::kInvalidRequest, "start of an active persistent request"};
    auto found = schedule_builders_.find(r);
    if (found == schedule_builders_.end()) {
      return {ErrorCode::kInternal, "a persistent collective without its schedule"};
    }
    build = found->second;
  }
  // Written down without the lock: the MPI layer's builder looks up
  // datatypes and packs in-place operands, which is no engine state.
  auto schedule = build();
  if (!schedule) return schedule.status();
  EngineGuard lock(mutex_);
  launch(r, std::move(schedule).value());
  return Status::ok();
}

void Engine::advance_schedules() {
  // A step's start may poll (a send that waits for room): no second pass
  // over the list from inside the first.
  if (advancing_schedules_) return;
  advancing_schedules_ = true;
  for (std::size_t i = 0; i < schedules_.size();) {
    if (advance(*schedules_[i])) {
      schedules_[i] = std::move(schedules_.back());
      schedules_.pop_back();
    } else {
      ++i;
    }
  }
  advancing_schedules_ = false;
}

bool Engine::advance(ScheduleRun& run) {
  const Schedule& schedule = *run.schedule;
  for (;;) {
    for (Request* step : run.pending) {
      if (!step->complete()) return false;
    }
    for (Request* step : run.pending) {
      if (!step->status.error.is_ok() && run.error.is_ok()) run.error = step->status.error;
      finish(step, nullptr);
    }
    run.pending.clear();
    if (!run.error.is_ok() || run.next_round == schedule.round_count()) break;
    // After a failed step, what the round posted before it still runs to
    // its end (its buffers are the schedule's); nothing after it starts.
    run.error = start_round(schedule, run.next_round++, &run.pending);
  }
  Request* r = run.request;
  r->status.error = std::move(run.error);
  maybe_complete(r);
  return true;
}

}  // namespace tagwire::engine
