//! `--parity-algorithm gpu-fixpoint`: `solve_game` hands the game and its compressed
//! priorities to the device's native parity solver (`DeviceSolver::solve_parity`), never to
//! a race; without a device, or with one that has no native parity solver, the answer says
//! the algorithm is unavailable. In `auto`'s race the device runs the route that
//! `SolveOptions::race_gpu_route` names.

use std::sync::atomic::{AtomicUsize, Ordering};

use egsolve_core::arena::Arena;
use egsolve_core::generate::random_parity;
use egsolve_core::solve::parity::ParityAlgorithm;
use egsolve_core::solve::race::GpuRoute;
use egsolve_core::solve::{
    Backend, Control, DeviceSolver, GpuOptions, Solution, SolveError, SolveOptions, TOP, solve_game,
};

/// A device whose native parity solver answers "player 1 wins everything" and counts its
/// calls; its energy route must never be asked.
#[derive(Debug, Default)]
struct NativeDevice {
    parity_calls: AtomicUsize,
}

impl DeviceSolver for NativeDevice {
    fn solve(&self, _: &Arena, _: &GpuOptions, _: &Control) -> Result<Solution, SolveError> {
        panic!("the energy route is not asked for gpu-fixpoint");
    }

    fn solve_parity(
        &self,
        arena: &Arena,
        priorities: &[u32],
        _: &GpuOptions,
        _: &Control,
    ) -> Result<Solution, SolveError> {
        assert_eq!(priorities.len(), arena.vertex_count());
        self.parity_calls.fetch_add(1, Ordering::SeqCst);
        let n = arena.vertex_count();
        let mut solution =
            Solution::winners_only(vec![TOP; n], vec![u32::MAX; n], Default::default());
        solution.stats.algorithm = "gpu-fixpoint".into();
        Ok(solution)
    }

    fn available(&self) -> bool {
        true
    }
}

/// A device with the energy route only (the trait's default `solve_parity`).
#[derive(Debug)]
struct EnergyOnly;

impl DeviceSolver for EnergyOnly {
    fn solve(&self, _: &Arena, _: &GpuOptions, _: &Control) -> Result<Solution, SolveError> {
        panic!("not asked");
    }

    fn available(&self) -> bool {
        true
    }
}

fn options(device: Option<&'static dyn DeviceSolver>, backend: Backend) -> SolveOptions {
    SolveOptions {
        backend,
        device,
        parity_algorithm: ParityAlgorithm::GpuFixpoint,
        race_from_vertices: 0,
        ..SolveOptions::default()
    }
}

#[test]
fn gpu_fixpoint_is_a_parity_algorithm_on_the_command_line() {
    let parsed: ParityAlgorithm = "gpu-fixpoint".parse().unwrap();
    assert_eq!(parsed, ParityAlgorithm::GpuFixpoint);
    assert!(ParityAlgorithm::SELECTABLE.contains(&parsed));
    assert!(
        !ParityAlgorithm::ALL.contains(&parsed),
        "the CPU does not run it"
    );
}

#[test]
fn gpu_fixpoint_goes_to_the_devices_parity_solver_and_never_races() {
    let device: &'static NativeDevice = Box::leak(Box::default());
    // Many priorities (the reduction does not fit) and few (it does): the same route.
    for (n, top) in [(500, 300), (70_000, 3)] {
        let game = random_parity(n, top, 3, 7).to_game();
        let view = game.parity.as_ref().map(|p| p.view());
        for backend in [Backend::Auto, Backend::Parity] {
            let before = device.parity_calls.load(Ordering::SeqCst);
            let answer = solve_game(
                &game.arena,
                view,
                &options(Some(device), backend),
                &Control::new(),
            )
            .expect("the device answers");
            assert_eq!(device.parity_calls.load(Ordering::SeqCst), before + 1);
            assert_eq!(answer.stats.algorithm, "gpu-fixpoint");
            assert!(answer.credit.iter().all(|&c| c == TOP));
            assert!(
                answer.parity.is_some(),
                "the priorities' summary is attached"
            );
        }
    }
}

#[test]
fn gpu_fixpoint_without_a_native_device_solver_is_unavailable() {
    let game = random_parity(50, 9, 3, 1).to_game();
    let view = game.parity.as_ref().map(|p| p.view());
    for device in [None, Some(&EnergyOnly as &'static dyn DeviceSolver)] {
        let answer = solve_game(
            &game.arena,
            view,
            &options(device, Backend::Parity),
            &Control::new(),
        );
        assert!(
            matches!(
                answer,
                Err(SolveError::Unavailable {
                    backend: "gpu-fixpoint",
                    ..
                })
            ),
            "{:?}",
            answer.map(|s| s.stats)
        );
    }
}

/// A device that counts which of its routes is asked; each answers at once with what the
/// CPU would answer too (it is given the answer), so a race may go either way.
#[derive(Debug)]
struct CountingDevice {
    answer: Vec<u64>,
    energy_calls: AtomicUsize,
    native_calls: AtomicUsize,
}

impl CountingDevice {
    fn reply(&self) -> Solution {
        let n = self.answer.len();
        Solution::winners_only(self.answer.clone(), vec![u32::MAX; n], Default::default())
    }
}

impl DeviceSolver for CountingDevice {
    fn solve(&self, _: &Arena, _: &GpuOptions, _: &Control) -> Result<Solution, SolveError> {
        self.energy_calls.fetch_add(1, Ordering::SeqCst);
        Ok(self.reply())
    }

    fn solve_parity(
        &self,
        _: &Arena,
        _: &[u32],
        _: &GpuOptions,
        _: &Control,
    ) -> Result<Solution, SolveError> {
        self.native_calls.fetch_add(1, Ordering::SeqCst);
        Ok(self.reply())
    }

    fn available(&self) -> bool {
        true
    }
}

#[test]
fn the_race_runs_the_device_route_the_options_name() {
    let game = random_parity(3_000, 3, 3, 11).to_game();
    let view = game.parity.as_ref().map(|p| p.view());
    let cpu = solve_game(&game.arena, view, &SolveOptions::default(), &Control::new())
        .expect("the CPU answers");
    let device: &'static CountingDevice = Box::leak(Box::new(CountingDevice {
        answer: cpu.credit.clone(),
        energy_calls: AtomicUsize::new(0),
        native_calls: AtomicUsize::new(0),
    }));
    for (route, energy, native) in [(GpuRoute::Energy, 1, 0), (GpuRoute::Fixpoint, 1, 1)] {
        let options = SolveOptions {
            device: Some(device),
            race_from_vertices: 0,
            race_gpu_route: route,
            ..SolveOptions::default()
        };
        let answer = solve_game(&game.arena, view, &options, &Control::new()).expect("answered");
        assert_eq!(answer.credit, cpu.credit, "{route:?}");
        assert_eq!(
            device.energy_calls.load(Ordering::SeqCst),
            energy,
            "{route:?}"
        );
        assert_eq!(
            device.native_calls.load(Ordering::SeqCst),
            native,
            "{route:?}"
        );
    }
}

#[test]
fn a_races_cpu_side_takes_a_quarter_of_the_cores_and_at_least_two() {
    for (cores, threads) in [(1, 2), (4, 2), (8, 2), (16, 4), (64, 16)] {
        assert_eq!(
            egsolve_core::solve::race::cpu_side_threads(cores),
            threads,
            "{cores} cores"
        );
    }
}
