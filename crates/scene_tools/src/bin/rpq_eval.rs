//! `rpq_eval`: reproduction of the RPQ paper's evaluation (Tables 1-2, Figs. 3-4) on two
//! RX60B arms facing each other (see `--help`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use rayon::prelude::*;
use rpq_scene::eval::{self, set_pair, PAPER_TABLE1, PAPER_TABLE2};
use rpq_scene::{
    generate_collision_matrix, GeneratorSettings, QueryOptions, QueryStats, ResolutionLevels,
    Robot, Scenario,
};

/// Reproduces the RPQ paper's evaluation: two RX60B arms facing each other at several base
/// distances, an equidistributed grid of 96 × 96 configuration pairs, single-threaded
/// collision-query timings per optimization. Writes CSV files and PNG/SVG plots.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Output directory.
    #[arg(long, default_value = "target/rpq_eval")]
    out: PathBuf,
    /// Base distances (m) of Table 1 and Figs. 3-4.
    #[arg(long, value_delimiter = ',', default_value = "0.4,0.5,0.6,0.7,0.8")]
    distances: Vec<f64>,
    /// Base distances (m) of Table 2 (collision-matrix share).
    #[arg(long, value_delimiter = ',', default_value = "0.4,0.6,0.9,1.2")]
    cm_distances: Vec<f64>,
    /// Random configurations sampled to build each collision matrix.
    #[arg(long, default_value_t = 20_000)]
    cm_samples: usize,
    /// Collision-matrix safety margin (m).
    #[arg(long, default_value_t = 0.05)]
    cm_margin: f64,
    /// Use every n-th configuration pair (1 = all 9,216).
    #[arg(long, default_value_t = 1)]
    stride: usize,
    /// Timed passes per mode (the fastest is kept).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Configuration pairs per distance for the minimum-distance timing.
    #[arg(long, default_value_t = 1152)]
    distance_samples: usize,
    /// Also check every colliding answer against parry3d-f64 (all link pairs) and a few
    /// distances (slow: parry's distance takes about 0.5 s per configuration pair).
    #[arg(long)]
    cross_check_parry: bool,
    /// Configuration pairs per distance for the parry distance cross-check.
    #[arg(long, default_value_t = 4)]
    parry_distance_samples: usize,
}

struct Mode {
    label: &'static str,
    opts: QueryOptions,
}

fn modes() -> Vec<Mode> {
    let m = |label, resolution_levels, weight_matrix, collision_matrix| Mode {
        label,
        opts: QueryOptions {
            resolution_levels,
            weight_matrix,
            collision_matrix,
        },
    };
    use ResolutionLevels::*;
    vec![
        m("L3", L3, false, false),
        m("L2+L3", L2L3, false, false),
        m("L1+L2+L3", L1L2L3, false, false),
        m("L3+WM", L3, true, false),
        m("L3+CM", L3, false, true),
        m("all (L1+L2+L3+WM+CM)", L1L2L3, true, true),
        m("L1+L2+L3+WM", L1L2L3, true, false),
        m("L1+L2+L3+CM", L1L2L3, false, true),
    ]
}

struct ModeResult {
    mean_us: f64,
    stats: QueryStats,
    colliding: Vec<bool>,
}

/// Runs every mode over the sweep, `reps` times in rotation (each mode with its own
/// scenario copy; weight matrices reset before every pass), keeping each mode's fastest
/// pass so that noise from other processes on the machine is filtered out.
fn run_modes(
    s: &Scenario,
    g: &[Vec<f64>],
    idx: &[usize],
    modes: &[Mode],
    reps: usize,
    pb: &rpq_scene_tools::Bar,
) -> Vec<ModeResult> {
    let mut copies: Vec<Scenario> = modes.iter().map(|_| s.clone()).collect();
    let mut out: Vec<ModeResult> = Vec::new();
    let mut best = vec![Duration::MAX; modes.len()];
    for rep in 0..reps.max(1) {
        for (m, mode) in modes.iter().enumerate() {
            let sc = &mut copies[m];
            sc.weights_mut().reset();
            let mut t = Duration::ZERO;
            let mut stats = QueryStats::default();
            let mut colliding = Vec::with_capacity(idx.len());
            for &k in idx {
                set_pair(sc, g, k).expect("grid within limits");
                let t0 = Instant::now();
                let r = sc.collide(&mode.opts);
                t += t0.elapsed();
                stats += r.stats;
                colliding.push(r.colliding);
            }
            pb.inc(idx.len() as u64);
            best[m] = best[m].min(t);
            if rep == 0 {
                out.push(ModeResult {
                    mean_us: 0.0,
                    stats,
                    colliding,
                });
            } else {
                assert_eq!(
                    out[m].colliding, colliding,
                    "answers changed between passes"
                );
            }
        }
    }
    for (o, t) in out.iter_mut().zip(best) {
        o.mean_us = t.as_secs_f64() * 1e6 / idx.len().max(1) as f64;
    }
    out
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Every mode's result per base distance (m), in the order of `--distances`.
type Results = Vec<(f64, Vec<ModeResult>)>;

/// A plotted series: (base distance (m), value).
type Series = Vec<(f64, f64)>;

/// Scenarios per base distance (m).
type Scenes = Vec<(f64, Scenario)>;

/// The configuration grid and the pairs of it that are swept.
struct Sweep {
    /// The 96 configurations of one arm (joint values, rad).
    g: Vec<Vec<f64>>,
    /// Indices of the swept configuration pairs (`left * g.len() + right`).
    idx: Vec<usize>,
    /// Number of configuration pairs in the full grid.
    total: usize,
    /// Links with meshes per arm.
    nb: usize,
}

/// Prints what is evaluated and writes `grid.txt`.
fn describe(a: &Args, sw: &Sweep) -> Res<()> {
    let nb = sw.nb;
    rpq_base::outln!("rpq_eval: two RX60B arms facing each other (left at the origin, right at x = d turned by 180°).");
    rpq_base::outln!("grid: {}", eval::GRID_DESCRIPTION);
    rpq_base::outln!(
        "{} configuration pairs per distance (stride {}); {nb} links with meshes per arm, {} link pairs; \
         collision matrix: pairs proven apart, then {} random samples and local refinement, margin {} m; single-threaded timings of the collision query only \
         (posing the arms excluded), fastest of --reps passes.",
        sw.idx.len(),
        a.stride,
        nb * nb,
        a.cm_samples,
        a.cm_margin
    );
    std::fs::write(
        a.out.join("grid.txt"),
        format!(
            "{}\njoint values (rad) of the 96 configurations, joints 1..6:\n{}",
            eval::GRID_DESCRIPTION,
            sw.g.iter()
                .map(|q| q
                    .iter()
                    .map(|x| format!("{x:.6}"))
                    .collect::<Vec<_>>()
                    .join(","))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    )?;
    Ok(())
}

/// The scenario of every base distance with its generated collision matrix (saved as
/// `collision_matrix_<d>.yaml`), and the number of never-colliding pairs per distance.
fn build_scenes(a: &Args, proto: &Robot) -> Res<(Scenes, Vec<(f64, usize)>)> {
    let mut all_d: Vec<f64> = a.distances.iter().chain(&a.cm_distances).copied().collect();
    all_d.sort_by(f64::total_cmp);
    all_d.dedup();
    let mut scenes: Scenes = Vec::new();
    let mut never_pairs: Vec<(f64, usize)> = Vec::new();
    for &d in &all_d {
        let mut s = eval::pair_scenario(proto, d)?;
        let pb =
            rpq_scene_tools::Bar::new(a.cm_samples as u64, format!("collision matrix d = {d} m"));
        let cm = generate_collision_matrix(
            &s,
            &GeneratorSettings {
                samples: a.cm_samples,
                margin: a.cm_margin,
                seed: 1,
                ..GeneratorSettings::default()
            },
            Some(&pb),
        )?;
        pb.finish_and_clear();
        cm.save(a.out.join(format!("collision_matrix_{d:.2}.yaml")))?;
        never_pairs.push((d, cm.len()));
        s.set_collision_matrix(cm)?;
        scenes.push((d, s));
    }
    Ok((scenes, never_pairs))
}

/// Times every mode at every distance of Table 1 (writes `timing.csv`) and warns about
/// modes that answer differently from plain L3; returns the results and the number of
/// differing answers.
fn sweep_collisions(
    a: &Args,
    scenes: &[(f64, Scenario)],
    sw: &Sweep,
    modes: &[Mode],
) -> Res<(Results, usize)> {
    let idx = &sw.idx;
    let mut timing_csv = String::from(
        "distance_m,mode,mean_us_per_query,l1_solved_share,l2_tests_per_query,l3_tests_per_query,cm_skipped_per_query,pairs_considered_per_query,engine_bv_tests_per_query,engine_triangle_tests_per_query\n",
    );
    let mut results: Results = Vec::new();
    let pb = rpq_scene_tools::Bar::new(
        (a.distances.len() * modes.len() * idx.len() * a.reps.max(1)) as u64,
        "collision sweeps",
    );
    let mut mismatches = 0usize;
    for &d in &a.distances {
        let s = &scenes.iter().find(|(x, _)| *x == d).expect("built").1;
        let rs = run_modes(s, &sw.g, idx, modes, a.reps, &pb);
        for (m, r) in modes.iter().zip(&rs) {
            let n = idx.len() as f64;
            writeln!(
                timing_csv,
                "{d},{},{:.4},{:.4},{:.3},{:.3},{:.3},{:.3},{:.1},{:.1}",
                m.label,
                r.mean_us,
                r.stats.l1_solved as f64 / n,
                r.stats.l2_tests as f64 / n,
                r.stats.l3_tests as f64 / n,
                r.stats.cm_skipped as f64 / n,
                r.stats.pairs_considered as f64 / n,
                r.stats.engine_bv_tests as f64 / n,
                r.stats.engine_triangle_tests as f64 / n
            )?;
        }
        for (m, r) in modes.iter().zip(&rs).skip(1) {
            let bad: Vec<usize> = r
                .colliding
                .iter()
                .zip(&rs[0].colliding)
                .enumerate()
                .filter(|(_, (x, y))| x != y)
                .map(|(n, _)| idx[n])
                .collect();
            if !bad.is_empty() {
                eprintln!(
                    "  WARNING d = {d} m, mode {}: {} configuration pairs answered differently from L3 (first: {:?})",
                    m.label,
                    bad.len(),
                    &bad[..bad.len().min(5)]
                    );
            }
            mismatches += bad.len();
        }
        results.push((d, rs));
    }
    pb.finish_and_clear();
    std::fs::write(a.out.join("timing.csv"), &timing_csv)?;
    Ok((results, mismatches))
}

/// Writes `answers.csv`: the plain-L3 answer of every swept configuration pair.
fn write_answers(a: &Args, results: &[(f64, Vec<ModeResult>)], sw: &Sweep) -> Res<()> {
    let mut answers = String::from("distance_m,index,left_config,right_config,colliding\n");
    for (d, rs) in results {
        for (n, &k) in sw.idx.iter().enumerate() {
            writeln!(
                answers,
                "{d},{k},{},{},{}",
                k / sw.g.len(),
                k % sw.g.len(),
                u8::from(rs[0].colliding[n])
            )?;
        }
    }
    std::fs::write(a.out.join("answers.csv"), answers)?;
    Ok(())
}

/// Table 1 (colliding pairs per distance, ours and the paper's): printed and written as
/// `table1.csv`; returns the colliding shares (%) of ours and of the paper for the plot.
fn table1(
    a: &Args,
    results: &[(f64, Vec<ModeResult>)],
    sw: &Sweep,
    mismatches: usize,
    modes: usize,
) -> Res<(Series, Series)> {
    let idx = &sw.idx;
    rpq_base::outln!("\nTable 1: colliding configuration pairs per base distance (ours vs paper)");
    rpq_base::outln!(
        "  dist (m) | checked | ours colliding | ours free | paper colliding | paper free"
    );
    let mut t1 = String::from(
        "distance_m,checked,colliding,not_colliding,paper_colliding,paper_not_colliding\n",
    );
    let mut t1_ours = Vec::new();
    let mut t1_paper = Vec::new();
    for (d, rs) in results {
        let c = rs[0].colliding.iter().filter(|&&x| x).count();
        let p = PAPER_TABLE1.iter().find(|(x, _, _)| (x - d).abs() < 1e-9);
        let (pc, pf) = p.map_or((String::from("-"), String::from("-")), |(_, c, f)| {
            (c.to_string(), f.to_string())
        });
        rpq_base::outln!(
            "  {d:8.2} | {:7} | {c:14} | {:9} | {pc:>15} | {pf:>10}",
            idx.len(),
            idx.len() - c
        );
        writeln!(t1, "{d},{},{c},{},{pc},{pf}", idx.len(), idx.len() - c)?;
        t1_ours.push((*d, 100.0 * c as f64 / idx.len() as f64));
        if let Some((_, c, _)) = p {
            t1_paper.push((*d, 100.0 * *c as f64 / 9216.0));
        }
    }
    std::fs::write(a.out.join("table1.csv"), t1)?;
    rpq_base::outln!(
        "  all optimization settings gave identical colliding answers: {} ({mismatches} mismatches over {} modes)",
        if mismatches == 0 { "yes" } else { "NO" },
        modes
    );
    Ok((t1_ours, t1_paper))
}

/// Table 2 (link pairs the collision matrix solves, ours and the paper's): printed and
/// written as `table2.csv`; returns our shares (%) for the plot.
fn table2(
    a: &Args,
    never_pairs: &[(f64, usize)],
    results: &[(f64, Vec<ModeResult>)],
    nb: usize,
) -> Res<Series> {
    rpq_base::outln!(
        "\nTable 2: link pairs solved by the collision matrix (ours: {} pairs, paper: 81)",
        nb * nb
    );
    rpq_base::outln!("  dist (m) | never-colliding pairs | share of pairs | share of pair queries in sweep | paper");
    let mut t2 = String::from(
        "distance_m,never_pairs,share_of_pairs_pct,share_of_pair_queries_pct,paper_pct\n",
    );
    let mut t2_ours = Vec::new();
    for &(d, never) in never_pairs {
        if !a.cm_distances.iter().any(|x| (x - d).abs() < 1e-9) && !a.distances.contains(&d) {
            continue;
        }
        let share = 100.0 * never as f64 / (nb * nb) as f64;
        let dyn_share = results.iter().find(|(x, _)| *x == d).map(|(_, rs)| {
            let st = &rs[4].stats;
            100.0 * st.cm_skipped as f64 / st.pairs_considered.max(1) as f64
        });
        let paper = PAPER_TABLE2
            .iter()
            .find(|(x, _)| (x - d).abs() < 1e-9)
            .map(|p| p.1);
        rpq_base::outln!(
            "  {d:8.2} | {never:21} | {share:13.2}% | {:>29} | {}",
            dyn_share.map_or("-".into(), |x| format!("{x:.2}%")),
            paper.map_or("-".into(), |x| format!("{x:.2}%"))
        );
        writeln!(
            t2,
            "{d},{never},{share:.3},{},{}",
            dyn_share.map_or(String::new(), |x| format!("{x:.3}")),
            paper.map_or(String::new(), |x| format!("{x}"))
        )?;
        t2_ours.push((d, share));
    }
    std::fs::write(a.out.join("table2.csv"), t2)?;
    Ok(t2_ours)
}

/// Prints the timings of Figs. 3-4 and saves the four plots; returns their (PNG, SVG)
/// paths.
fn figures(
    a: &Args,
    modes: &[Mode],
    results: &[(f64, Vec<ModeResult>)],
    t1: &(Series, Series),
    t2_ours: &[(f64, f64)],
) -> Res<Vec<(PathBuf, PathBuf)>> {
    let (t1_ours, t1_paper) = t1;
    rpq_base::outln!("\nFig. 3 / Fig. 4: mean time per collision query (µs), single-threaded");
    rpq_base::out!("  dist (m)");
    for m in modes {
        rpq_base::out!(" | {:>20}", m.label);
    }
    rpq_base::outln!();
    for (d, rs) in results {
        rpq_base::out!("  {d:8.2}");
        for r in rs {
            rpq_base::out!(" | {:20.2}", r.mean_us);
        }
        rpq_base::outln!();
    }
    let series = |k: usize| -> Vec<(f64, f64)> {
        results.iter().map(|(d, rs)| (*d, rs[k].mean_us)).collect()
    };
    let mut plots: Vec<(PathBuf, PathBuf)> = Vec::with_capacity(4);
    let fig3 = rpq_plot::Figure::new(
        "Fig. 3: collision query time vs resolution levels (2 × RX60B)",
        "distance between robot bases (m)",
        "mean time per query (µs)",
    )
    .line("L3", &series(0))
    .line("L2+L3", &series(1))
    .line("L1+L2+L3", &series(2))
    .line("all optimizations", &series(5))
    .save(a.out.join("fig3_resolution_levels"))?;
    plots.push(fig3);
    plots.push(
        rpq_plot::Figure::new(
            "Fig. 4: collision query time with / without collision matrix",
            "distance between robot bases (m)",
            "mean time per query (µs)",
        )
        .line("NoCM (L3)", &series(0))
        .line("CM (L3+CM)", &series(4))
        .line("WM (L3+WM)", &series(3))
        .save(a.out.join("fig4_collision_matrix"))?,
    );
    plots.push(
        rpq_plot::Figure::new(
            "Table 1: colliding configuration pairs",
            "distance between robot bases (m)",
            "colliding (%)",
        )
        .line("ours", t1_ours)
        .line("paper", t1_paper)
        .save(a.out.join("table1_colliding"))?,
    );
    plots.push(
        rpq_plot::Figure::new(
            "Table 2: link pairs solved by the collision matrix",
            "distance between robot bases (m)",
            "pairs never colliding (%)",
        )
        .line("ours", t2_ours)
        .line("paper", PAPER_TABLE2.as_ref())
        .save(a.out.join("table2_collision_matrix"))?,
    );
    Ok(plots)
}

/// Times the robot–robot minimum distance with and without box-bound pruning (writes
/// `distance.csv`) and prints the summary per distance.
fn distance_sweep(a: &Args, scenes: &mut [(f64, Scenario)], sw: &Sweep) -> Res<()> {
    let (g, total, nb) = (&sw.g, sw.total, sw.nb);
    rpq_base::outln!("\nrobot–robot minimum distance (closest link pair, witness points), {} configuration pairs per distance:", a.distance_samples);
    let pick: Vec<usize> = (0..a.distance_samples.clamp(1, total))
        .map(|i| i * total / a.distance_samples.clamp(1, total))
        .collect();
    let mut dist_csv = String::from("distance_m,index,min_distance,link_a,link_b\n");
    let mut dist_rows = Vec::new();
    let pb = rpq_scene_tools::Bar::new(
        (a.distances.len() * pick.len() * 2) as u64,
        "distance sweeps",
    );
    for &d in &a.distances {
        let s = &mut scenes.iter_mut().find(|(x, _)| *x == d).expect("built").1;
        let (mut t_on, mut t_off) = (Duration::ZERO, Duration::ZERO);
        let mut differ = 0usize;
        let mut exact = 0u64;
        for &k in &pick {
            set_pair(s, g, k)?;
            let t0 = Instant::now();
            let on = s.min_distance(&QueryOptions::ALL_ON).expect("two robots");
            t_on += t0.elapsed();
            exact += on.stats.l3_tests;
            let t0 = Instant::now();
            let off = s.min_distance(&QueryOptions::ALL_OFF).expect("two robots");
            t_off += t0.elapsed();
            pb.inc(2);
            differ += usize::from(
                on.distance != off.distance || on.body_a != off.body_a || on.body_b != off.body_b,
            );
            writeln!(
                dist_csv,
                "{d},{k},{:.12e},{},{}",
                on.distance,
                s.body_name(on.body_a),
                s.body_name(on.body_b)
            )?;
        }
        let n = pick.len() as f64;
        dist_rows.push((
            d,
            exact as f64 / pick.len() as f64,
            t_on.as_secs_f64() * 1e6 / n,
            t_off.as_secs_f64() * 1e6 / n,
            differ,
        ));
    }
    pb.finish_and_clear();
    std::fs::write(a.out.join("distance.csv"), dist_csv)?;
    for (d, exact, on, off, differ) in &dist_rows {
        rpq_base::outln!(
            "  d = {d:.2} m: {on:9.1} µs with box-bound pruning ({exact:.1} of {} link pairs reach the mesh engine), \
             {off:9.1} µs without; answers differing: {differ}",
            nb * nb
        );
    }
    Ok(())
}

/// Collision queries over the whole grid at every distance on two rayon threads (posing
/// included); prints the throughput.
fn parallel_sweep(a: &Args, scenes: &[(f64, Scenario)], sw: &Sweep) -> Res<()> {
    let (g, total) = (&sw.g, sw.total);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
    let t0 = Instant::now();
    let chunk = 512;
    let hits: usize = pool.install(|| {
        scenes
            .par_iter()
            .filter(|(d, _)| a.distances.contains(d))
            .flat_map(|(_, s)| {
                (0..total.div_ceil(chunk))
                    .into_par_iter()
                    .map(move |c| (s, c))
            })
            .map(|(s, c)| {
                let mut sc = s.clone();
                let mut h = 0usize;
                for k in c * chunk..((c + 1) * chunk).min(total) {
                    set_pair(&mut sc, g, k).expect("grid");
                    h += usize::from(sc.collide(&QueryOptions::ALL_ON).colliding);
                }
                h
            })
            .sum()
    });
    let el = t0.elapsed().as_secs_f64();
    let n = total * a.distances.len();
    rpq_base::outln!(
        "\nparallel sweep (rayon, 2 threads, all optimizations, posing included): {n} configuration pairs in {el:.3} s = {:.0} pairs/s ({hits} colliding)",
        n as f64 / el
    );
    Ok(())
}

/// Checks every colliding answer over the whole grid and a few distances against
/// parry3d-f64 (`--cross-check-parry`).
fn cross_check_parry(
    a: &Args,
    scenes: &mut [(f64, Scenario)],
    results: &[(f64, Vec<ModeResult>)],
    sw: &Sweep,
) -> Res<()> {
    use rpq_scene_tools::parry_peer::ParryScene;
    let (g, idx, total) = (&sw.g, &sw.idx, sw.total);
    let parry = ParryScene::new(&scenes[0].1)?;
    let pb = rpq_scene_tools::Bar::new(
        (a.distances.len() * (total + a.parry_distance_samples)) as u64,
        "parry cross-check",
    );
    rpq_base::outln!(
        "\ncross-check with parry3d-f64 (all 49 link pairs, intersection_test / distance):"
    );
    for (d, rs) in results {
        let s = &mut scenes.iter_mut().find(|(x, _)| x == d).expect("built").1;
        let (mut ours_c, mut parry_c, mut diff) = (0usize, 0usize, 0usize);
        let mut ours_full = vec![None; total];
        for (n, &k) in idx.iter().enumerate() {
            ours_full[k] = Some(rs[0].colliding[n]);
        }
        #[allow(clippy::needless_range_loop)]
        for k in 0..total {
            set_pair(s, g, k)?;
            let p = parry.collide(s).is_some();
            let o = ours_full[k].unwrap_or_else(|| s.collide(&QueryOptions::ALL_OFF).colliding);
            ours_c += usize::from(o);
            parry_c += usize::from(p);
            diff += usize::from(o != p);
            pb.inc(1);
        }
        let mut worst: f64 = 0.0;
        for i in 0..a.parry_distance_samples {
            let k = (i * 7919 + 13) % total;
            set_pair(s, g, k)?;
            let (pd, _, _) = parry.min_distance(s).expect("two robots");
            let od = s
                .min_distance(&QueryOptions::ALL_ON)
                .expect("two robots")
                .distance;
            worst = worst.max((pd - od).abs());
            pb.inc(1);
        }
        rpq_base::outln!(
            "  d = {d:.2} m: colliding ours {ours_c}, parry {parry_c}, differing configurations {diff}; max |Δ distance| over {} pairs {worst:.2e} m",
            a.parry_distance_samples
            );
    }
    pb.finish_and_clear();
    Ok(())
}

/// Prints how our results compare with the paper's trends.
fn print_trends(
    modes: &[Mode],
    results: &[(f64, Vec<ModeResult>)],
    never_pairs: &[(f64, usize)],
    sw: &Sweep,
) {
    let (idx, nb) = (&sw.idx, sw.nb);
    let first = &results.first().expect("distances").1;
    let last = &results.last().expect("distances").1;
    rpq_base::outln!(
        "\nTrends (our meshes and grid are not Staubli's, so counts differ; compare shapes):"
    );
    rpq_base::outln!(
        "  * Table 1: colliding pairs fall monotonically with distance as in the paper ({} → {}), but our grid fixes the wrist \
         and samples joints 1-3 at cell centres, so fewer configurations reach across than in the paper's 6-DOF grid.",
        first[0].colliding.iter().filter(|&&x| x).count(),
        last[0].colliding.iter().filter(|&&x| x).count()
    );
    let fastest: Vec<String> = results
        .iter()
        .map(|(d, rs)| {
            let k = (0..3)
                .min_by(|&x, &y| rs[x].mean_us.total_cmp(&rs[y].mean_us))
                .expect("3 modes");
            format!("{d} m: {}", modes[k].label)
        })
        .collect();
    rpq_base::outln!(
        "  * Fig. 3: fastest resolution setting per distance: {}. As in the paper, L1 pays off more as the robots move \
         apart (the whole-robot boxes separate {:.0}% of the queries at the nearest distance, {:.0}% at the farthest), so \
         its gain over L2+L3 is smallest when the robots are close ({:.2} vs {:.2} µs at {} m; the paper found L2+L3 \
         or L3 best there). Unlike the paper, L2 helps at every distance: a link-box test costs ~30 ns, a mesh query \
         microseconds.",
        fastest.join(", "),
        100.0 * first[2].stats.l1_solved as f64 / idx.len() as f64,
        100.0 * last[2].stats.l1_solved as f64 / idx.len() as f64,
        first[1].mean_us,
        first[2].mean_us,
        results.first().expect("distances").0
    );
    let cm_faster: Vec<String> = results
        .iter()
        .filter(|(_, rs)| rs[4].mean_us < rs[0].mean_us)
        .map(|(d, _)| format!("{d}"))
        .collect();
    rpq_base::outln!(
        "  * Table 2 / Fig. 4: as in the paper the collision matrix solves more link pairs as the robots move apart \
         ({:.0}% of the pair queries at {} m, {:.0}% at {} m). CM was faster than plain L3 at {} of {} distances ({} m). \
         Our shares of never-colliding pairs ({}) exceed the paper's at every distance (49 pairs of our 7 meshed links \
         vs the paper's 81; our arms are slimmer). They stay below 100% at the farthest distance: with the shoulders \
         {} m apart the arms (reach 0.665 m from the shoulder plus the wrist's thickness) still touch when both point \
         at each other, so {} pairs of the distal links remain; the far pairs are proven apart by configuration-\
         independent bounds, not merely unseen by sampling (see collision_matrix_<d>.yaml, `decisions`). The \
         time saved is at most the share of skipped far pairs times the cost of a far pair (a root-box rejection in \
         our engine, ~0.1 µs), so it is small in absolute terms and easily hidden by machine noise; with L1 and L2 on, \
         few pairs are left for the matrix to remove.",
        {
            let st = &first[4].stats;
            100.0 * st.cm_skipped as f64 / st.pairs_considered.max(1) as f64
        },
        results.first().expect("distances").0,
        {
            let st = &last[4].stats;
            100.0 * st.cm_skipped as f64 / st.pairs_considered.max(1) as f64
        },
        results.last().expect("distances").0,
        cm_faster.len(),
        results.len(),
        cm_faster.join(", "),
        never_pairs
            .iter()
            .map(|(d, never)| format!("{d} m: {:.1}%", 100.0 * *never as f64 / (nb * nb) as f64))
            .collect::<Vec<_>>()
            .join(", "),
        never_pairs.last().map_or(0.0, |t| t.0),
        never_pairs.last().map_or(0, |t| nb * nb - t.1),
    );
    {
        let (d0, rs) = results.first().expect("distances");
        let n = idx.len() as f64;
        let per = |k: usize| {
            (
                rs[k].stats.l3_tests as f64 / n,
                rs[k].stats.engine_bv_tests as f64 / n,
                rs[k].mean_us,
            )
        };
        let (p0, b0, t0) = per(0);
        let (p1, b1, t1) = per(3);
        let (faster, slower): (Vec<String>, Vec<String>) = {
            let f: Vec<String> = results
                .iter()
                .filter(|(_, r)| r[6].mean_us < r[2].mean_us)
                .map(|(d, _)| format!("{d}"))
                .collect();
            let s: Vec<String> = results
                .iter()
                .filter(|(_, r)| r[6].mean_us >= r[2].mean_us)
                .map(|(d, _)| format!("{d}"))
                .collect();
            (f, s)
        };
        rpq_base::outln!(
            "  * Weight matrix (paper §3.2.2) at {d0} m, L3 alone vs L3+WM: {p0:.1} → {p1:.1} mesh-level pair queries per \
             collision query (fewer, as the paper intends), {b0:.0} → {b1:.0} bounding-volume tests inside the engine, \
             {t0:.2} → {t1:.2} µs. On top of L1+L2+L3 it was faster at [{}] m and slower at [{}] m: the pairs it ranks \
             first (links that often collide) are also the costly ones to test, and pairs the boxes reject cost almost \
             nothing in any order, so its gain is not reliable here; QueryOptions::default() leaves it off.",
            faster.join(", "),
            slower.join(", ")
        );
    }
}

/// Lists the files written.
fn list_outputs(a: &Args, plots: &[(PathBuf, PathBuf)]) {
    rpq_base::outln!("\nwrote {}:", a.out.display());
    for f in [
        "grid.txt",
        "timing.csv",
        "table1.csv",
        "table2.csv",
        "answers.csv",
        "distance.csv",
    ] {
        rpq_base::outln!("  {}", a.out.join(f).display());
    }
    for (png, svg) in plots {
        rpq_base::outln!("  {} {}", png.display(), svg.display());
    }
}

fn main() -> Res<()> {
    let a = Args::parse();
    std::fs::create_dir_all(&a.out)?;
    let proto = eval::rx60()?;
    let g = eval::grid(&proto);
    let total = g.len() * g.len();
    let sw = Sweep {
        idx: (0..total).step_by(a.stride.max(1)).collect(),
        nb: proto.bodies().len(),
        g,
        total,
    };
    describe(&a, &sw)?;
    let (mut scenes, never_pairs) = build_scenes(&a, &proto)?;
    let modes = modes();
    let (results, mismatches) = sweep_collisions(&a, &scenes, &sw, &modes)?;
    write_answers(&a, &results, &sw)?;
    let t1 = table1(&a, &results, &sw, mismatches, modes.len())?;
    let t2_ours = table2(&a, &never_pairs, &results, sw.nb)?;
    let plots = figures(&a, &modes, &results, &t1, &t2_ours)?;
    distance_sweep(&a, &mut scenes, &sw)?;
    parallel_sweep(&a, &scenes, &sw)?;
    if a.cross_check_parry {
        cross_check_parry(&a, &mut scenes, &results, &sw)?;
    }
    print_trends(&modes, &results, &never_pairs, &sw);
    list_outputs(&a, &plots);
    Ok(())
}
