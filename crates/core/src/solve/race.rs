//! `auto` on a parity game with a GPU at hand: the GPU route (the energy reduction solved on
//! the device) and the CPU parity solver run **as a race**, the first answer wins and the
//! loser is cancelled.
//!
//! Neither side dominates. On model-checking games of millions of vertices the reduction on
//! the GPU answers in milliseconds where the parity solver needs a second (BRP: 7.5 ms
//! against 1.95 s on the H200 host); on games that the parity solver takes apart in a few
//! decompositions (an equivalence-checking game of 0.5 M vertices: 69 ms) the lifting on the
//! device climbs for seconds. Which one wins is not known before running both, so both run:
//! the race costs the loser's work until its next checkpoint (a round on the device, a few
//! thousand units of the parity solver's work), never its whole run.
//!
//! What races, and what does not ([`races`]): only `auto` without credits, on a parity game
//! whose reduction fits in 64 bits, with a device the caller linked and that answers
//! [`DeviceSolver::available`], and of at least [`RACE_FROM_VERTICES`] vertices
//! ([`FRESH_PROCESS_RACE_FROM`] in a fresh process). Smaller
//! games stay on the CPU: the parity solver answers them in a few milliseconds, less than
//! the GPU route's fixed costs (upload, launches, and in a fresh process the driver's
//! start-up), so a race could only cost.
//!
//! The device's side is the energy route, or the device's native parity solver where
//! [`SolveOptions::race_gpu_route`] says so ([`GpuRoute`]). Neither races where the
//! reduction does not fit: on the random games of many priorities that have no energy
//! route, the native solver never answered within 8 s where the CPU portfolio takes 16 ms
//! to 1.7 s (BENCHMARKS.md §7).
//!
//! The answer is the parity solver's shape whoever wins: winners and strategies, no credits
//! (`credits_computed: false`). The GPU's strategies are winning in the parity game: a
//! cycle's weight in the reduction has the sign of its top priority's parity, so a strategy
//! that keeps every cycle non-negative (player 0, on `W0`) or negative (player 1, on `W1`)
//! keeps every cycle's top priority even or odd. `SolveStats::backend` names the side that
//! answered (`gpu` or `parity`), so a caller can say where the answer was computed.
//!
//! The two sides share one cancel flag of their own (the race's); the caller's cancel flag
//! is forwarded to it by the thread that waits for the answers, so cancelling the solve
//! stops both.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{
    Control, DeviceSolver, GpuOptions, Interrupted, Solution, SolveError, SolveOptions, parity,
};
use crate::arena::Arena;
use crate::parity::ParityView;

/// Parity games with fewer vertices are not raced where the device is warm (the service):
/// the CPU answers them alone ([`SolveOptions::race_from_vertices`]).
pub const RACE_FROM_VERTICES: usize = 1 << 16;

/// The same in a fresh process (the command line), whose GPU side starts the driver (about
/// 350 ms on the H200 host) before it can answer: only games on which the parity solver
/// takes longer than that are worth a race. Measured there: BRP (2.2 M vertices) 0.44 s
/// raced against 0.75 s on the CPU alone, while the race cost Onebit (154 K) and SWP 17 and
/// 95 % when they raced from 2^16.
pub const FRESH_PROCESS_RACE_FROM: usize = 1 << 20;

/// The threads of a race's CPU side on a machine of `cores` when it races a GPU: a quarter
/// of the cores, at least 2. On every core it slowed the GPU side it raced. Measured on the
/// H200 host (16 cores, warm service, job solve, 5 runs; BENCHMARKS.md §7): BRP 13.5–14.4 ms
/// with 4 threads against 348–397 ms with 16 (where the CPU side won four of five: the GPU
/// side, 9.7–9.9 ms alone, had not answered), Hesselink 12.2–14.0 against 17.5–30.6 ms; the
/// games the CPU side wins took as long either way (Hanoi 10: 7.6–14.3 against 7.3–12.4
/// ms, Lift 3: 24.9–25.7 against 23.7–29.4 ms). The GPU side's host threads take the rest
/// (`egsolve_gpu::race_host_threads`).
pub fn cpu_side_threads(cores: usize) -> usize {
    (cores / 4).max(2)
}

/// How often the waiting thread looks at the caller's cancel flag.
const FORWARD_CANCEL_EVERY: Duration = Duration::from_millis(2);

/// Which side of a race answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The energy reduction on the device.
    Gpu,
    /// The parity solver on the CPU.
    Cpu,
}

/// The device `auto` races against on this game, if it races at all: `auto` without
/// credits, with a CPU parity algorithm, on a parity game whose reduction fits, of at least
/// [`SolveOptions::race_from_vertices`] vertices, with an available device.
pub fn races(
    arena: &Arena,
    view: ParityView<'_>,
    options: &SolveOptions,
) -> Option<&'static dyn DeviceSolver> {
    let device = options.device?;
    let eligible = options.backend == super::Backend::Auto
        && !options.credits
        && options.parity_algorithm != super::ParityAlgorithm::GpuFixpoint
        && view.reduction_fits()
        && arena.vertex_count() >= options.race_from_vertices;
    (eligible && device.available()).then_some(device)
}

/// Runs the GPU route on `device` and the parity solver side by side; the first answer is
/// returned (winners and strategies, no credits) and the other side is cancelled and waited
/// for. An error of one side (the device out of memory, say) leaves the answer to the other;
/// when both fail the parity solver's error is returned (the caller's cancellation or
/// deadline, usually).
pub fn solve(
    arena: &Arena,
    view: ParityView<'_>,
    device: &dyn DeviceSolver,
    options: &SolveOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    let race = Race::new(control);
    std::thread::scope(|scope| {
        let route = options.race_gpu_route;
        let gpu = race.side(Side::Gpu, move |control| {
            route.solve(device, arena, view.priorities, options, control)
        });
        let cpu = race.side(Side::Cpu, |control| {
            let algorithm = options.parity_algorithm;
            parity::solve(arena, view.priorities, algorithm, &options.cpu, control)
        });
        spawn_named("egsolve-race-gpu", |b| b.spawn_scoped(scope, gpu).map(drop));
        spawn_named("egsolve-race-cpu", |b| b.spawn_scoped(scope, cpu).map(drop));
        // The loser stops at its next checkpoint; the scope joins it.
        race.finish(control)
    })
    .inspect(|_| tracing::debug!("race: the loser stopped"))
}

/// A game that a detached race's sides own a share of ([`solve_detached`]).
pub trait RacedGame: Send + Sync + 'static {
    /// The arena (the reduction's weights).
    fn arena(&self) -> &Arena;
    /// The priorities, for a parity game.
    fn parity(&self) -> Option<ParityView<'_>>;
}

impl RacedGame for crate::format::Game {
    fn arena(&self) -> &Arena {
        &self.arena
    }

    fn parity(&self) -> Option<ParityView<'_>> {
        self.parity.as_ref().map(crate::format::ParityInfo::view)
    }
}

/// [`solve`] without waiting for the loser: it is cancelled, and stops at its next
/// checkpoint on its own, holding its share of `game` until then. The caller has its
/// answer as soon as the winner's is there: a fresh process's GPU side may be inside the
/// driver's start-up or a large copy, which no cancel flag interrupts, for a few hundred
/// milliseconds; the parity solver on a game of millions of vertices may be between two
/// checkpoints for as long (measured on the H200 host, BRP: the GPU answered in 10 ms, the
/// parity solver stopped 175 ms later). `game` must be a parity game.
pub fn solve_detached<G: RacedGame>(
    game: Arc<G>,
    device: &'static dyn DeviceSolver,
    options: &SolveOptions,
    control: &Control,
) -> Result<Solution, SolveError> {
    let race = Race::new(control);
    let options = Arc::new(options.clone());
    let gpu = {
        let (game, options) = (game.clone(), options.clone());
        let route = options.race_gpu_route;
        race.side(Side::Gpu, move |control| {
            let view = game
                .parity()
                .expect("a detached race is run on a parity game");
            route.solve(device, game.arena(), view.priorities, &options, control)
        })
    };
    let cpu = race.side(Side::Cpu, move |control| {
        let view = game
            .parity()
            .expect("a detached race is run on a parity game");
        let algorithm = options.parity_algorithm;
        parity::solve(
            game.arena(),
            view.priorities,
            algorithm,
            &options.cpu,
            control,
        )
    });
    for (name, side) in [
        (
            "egsolve-race-gpu",
            Box::new(gpu) as Box<dyn FnOnce() + Send>,
        ),
        ("egsolve-race-cpu", Box::new(cpu)),
    ] {
        DETACHED_RUNNING.fetch_add(1, Ordering::SeqCst);
        let counted = move || {
            side();
            DETACHED_RUNNING.fetch_sub(1, Ordering::SeqCst);
        };
        spawn_named(name, |b| b.spawn(counted).map(drop));
    }
    race.finish(control)
}

/// Sides of [`solve_detached`] races still running (a loser not yet stopped).
static DETACHED_RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Whether a loser of a [`solve_detached`] race is still running: a process that exits now
/// may wait for it in the driver's exit handlers, so the command line ends without them.
pub fn detached_loser_running() -> bool {
    DETACHED_RUNNING.load(Ordering::SeqCst) > 0
}

/// Which of the device's routes races the CPU parity solver ([`SolveOptions::race_gpu_route`]).
///
/// Measured on the H200 host (warm service, default options, job solve, 5 runs each, the
/// race's CPU side on a quarter of the cores; BENCHMARKS.md §7): neither route wins
/// everywhere. The native solver answered Onebit in 4.1–4.6 ms where the energy route took
/// 17.2–19.7 ms, but BRP in 47.7–73.0 ms (energy route: 19.5–23.3 ms), Hesselink in
/// 20.7–23.4 ms (13.5–23.1 ms) and SWP in 5.1–7.8 ms (3.5–5.0 ms). So the energy route stays
/// the default, and `EGSOLVE_RACE_GPU=fixpoint` picks the other for a whole process (a
/// server whose users send games like Onebit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuRoute {
    /// The energy reduction, lifted on the device (`accelerated-lifting`).
    Energy,
    /// The device's native parity solver (`gpu-fixpoint`).
    Fixpoint,
}

impl GpuRoute {
    /// `EGSOLVE_RACE_GPU=fixpoint` picks the native solver; anything else, or nothing, the
    /// energy route. Read once per process (every default [`SolveOptions`] asks).
    pub fn from_env() -> GpuRoute {
        static ROUTE: std::sync::OnceLock<GpuRoute> = std::sync::OnceLock::new();
        *ROUTE.get_or_init(|| match std::env::var("EGSOLVE_RACE_GPU") {
            Ok(v) if v.eq_ignore_ascii_case("fixpoint") => GpuRoute::Fixpoint,
            _ => GpuRoute::Energy,
        })
    }

    fn solve(
        self,
        device: &dyn DeviceSolver,
        arena: &Arena,
        priorities: &[u32],
        options: &SolveOptions,
        control: &Control,
    ) -> Result<Solution, SolveError> {
        match self {
            GpuRoute::Energy => {
                // Winners read on the device route's own warm threads (rayon's pool here,
                // woken for it, took 0.4–0.8 ms on the H200 host, 2–3.9 in one job of eight),
                // and its host passes on the cores the CPU side leaves (`cpu_side_threads`).
                let gpu = GpuOptions {
                    winners_only: true,
                    beside_race: true,
                    ..options.gpu.clone()
                };
                device.solve(arena, &gpu, control)
            }
            GpuRoute::Fixpoint => device.solve_parity(arena, priorities, &options.gpu, control),
        }
    }
}

/// The answer of one side.
type Answer = (Side, Result<Solution, SolveError>);

/// One race: the sides' controls (one cancel flag of their own) and the answers' channel.
struct Race {
    cpu_control: Control,
    gpu_control: Control,
    answers: mpsc::Receiver<Answer>,
    sender: mpsc::Sender<Answer>,
    /// When the race was set up: the sides' debug events say how long after it they
    /// started and answered.
    started: Instant,
}

impl Race {
    fn new(control: &Control) -> Race {
        // The parity solver reports its progress to the caller; the device keeps its own
        // counters (two solvers writing one set of counters would report neither).
        let cpu_control = control.linked();
        let gpu_control = cpu_control.clone().with_own_progress();
        let (sender, answers) = mpsc::channel();
        Race {
            cpu_control,
            gpu_control,
            answers,
            sender,
            started: Instant::now(),
        }
    }

    /// A side of the race as a thread's body: `run` under that side's control, its answer
    /// sent to [`Race::finish`].
    fn side<'a>(
        &self,
        side: Side,
        run: impl FnOnce(&Control) -> Result<Solution, SolveError> + Send + 'a,
    ) -> impl FnOnce() + Send + 'a {
        let control = match side {
            Side::Gpu => self.gpu_control.clone(),
            Side::Cpu => self.cpu_control.clone(),
        };
        let (sender, started) = (self.sender.clone(), self.started);
        move || {
            let ms = |t: Instant| t.duration_since(started).as_secs_f64() * 1e3;
            tracing::debug!(?side, ms = ms(Instant::now()), "race: side started");
            let answer = run(&control);
            tracing::debug!(
                ?side,
                ms = ms(Instant::now()),
                ok = answer.is_ok(),
                "race: side done"
            );
            let _ = sender.send((side, answer));
        }
    }

    /// Waits for the first answer and cancels the other side.
    fn finish(self, caller: &Control) -> Result<Solution, SolveError> {
        let Race {
            cpu_control,
            answers,
            sender,
            started,
            ..
        } = self;
        drop(sender);
        let outcome = first_answer(&answers, caller, &cpu_control);
        cpu_control.cancel();
        let answer = outcome.map(|(side, solution)| (side, as_parity_answer(solution, side)));
        if let Ok((side, _)) = &answer {
            let ms = started.elapsed().as_secs_f64() * 1e3;
            tracing::debug!(?side, ms, "race: answered");
        }
        answer.map(|(_, solution)| solution)
    }
}

/// Starts a thread named `name` with `spawn`, or says why it could not (the race then
/// goes on with the other side).
fn spawn_named(name: &str, spawn: impl FnOnce(std::thread::Builder) -> std::io::Result<()>) {
    if let Err(e) = spawn(std::thread::Builder::new().name(name.into())) {
        tracing::warn!("no {name} thread ({e}); the race goes on without it");
    }
}

/// Waits for the first successful answer, forwarding the caller's cancel flag to the race's.
fn first_answer(
    answers: &mpsc::Receiver<(Side, Result<Solution, SolveError>)>,
    caller: &Control,
    race: &Control,
) -> Result<(Side, Solution), SolveError> {
    let mut cpu_error = None;
    let mut gpu_error = None;
    loop {
        match answers.recv_timeout(FORWARD_CANCEL_EVERY) {
            Ok((side, Ok(solution))) => return Ok((side, solution)),
            Ok((Side::Cpu, Err(e))) => cpu_error = Some(e),
            Ok((Side::Gpu, Err(e))) => {
                if !matches!(e, SolveError::Interrupted(_)) {
                    tracing::info!("the GPU side of the race gave up ({e}); the CPU answers");
                }
                gpu_error = Some(e);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if caller.is_cancelled() {
                    race.cancel();
                }
            }
            // Both sides sent (or could not start): every answer was an error.
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(cpu_error
                    .or(gpu_error)
                    .unwrap_or(SolveError::Interrupted(Interrupted::Cancelled)));
            }
        }
    }
}

/// The race's answer in the parity solver's shape: winners (0 on `W0`, ⊤ on `W1`) and
/// strategies, whichever side computed it.
fn as_parity_answer(mut solution: Solution, side: Side) -> Solution {
    if side == Side::Gpu {
        if solution.stats.algorithm.is_empty() {
            solution.stats.algorithm = "accelerated-lifting".into();
        }
        if solution.credits_computed {
            solution.keep_winners_only();
        }
    }
    solution
}
