mod common;
use common::*;
use nalgebra::Vector3;
use rpq_proximity::*;

#[test]
fn boxes_smoke() {
    let a = box_mesh(Vector3::new(0.5, 0.5, 0.5));
    let s = sphere_mesh(0.3, 12);
    let mut ws = QueryWorkspace::default();
    for k in 0..200 {
        let x = 0.2 + k as f64 * 0.01;
        let pa = pose([0.0, 0.0, 0.0], [0.1, 0.2, 0.3]);
        let pb = pose([x, 0.1, -0.05], [0.3 * k as f64, 0.1, 0.0]);
        let c = collide(&pa, &a, &pb, &s, CollisionMode::AllContacts, &mut ws);
        let cb = brute::collide(&pa, &a, &pb, &s, CollisionMode::AllContacts);
        let mut p1 = c.pairs.clone();
        p1.sort();
        let mut p2 = cb.pairs.clone();
        p2.sort();
        assert_eq!(p1, p2);
        let d = distance(&pa, &a, &pb, &s, &DistanceRequest::default(), &mut ws).unwrap();
        let db = brute::distance(&pa, &a, &pb, &s);
        assert!(
            (d.distance - db.distance).abs() <= 1e-12,
            "{k} {} {}",
            d.distance,
            db.distance
        );
    }
}

#[test]
fn models_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Model>();
    check::<Obb>();
    check::<QueryWorkspace>();
    // a model shared by threads, each with its own workspace
    let m = std::sync::Arc::new(sphere_mesh(0.3, 8));
    let handles: Vec<_> = (0..2)
        .map(|k| {
            let m = m.clone();
            std::thread::spawn(move || {
                let mut ws = QueryWorkspace::default();
                let pb = pose([0.7 + 0.1 * k as f64, 0.0, 0.0], [0.0, 0.0, 0.0]);
                distance(
                    &pose([0.0; 3], [0.0; 3]),
                    &m,
                    &pb,
                    &m,
                    &DistanceRequest::default(),
                    &mut ws,
                )
                .unwrap()
                .distance
            })
        })
        .collect();
    for (k, h) in handles.into_iter().enumerate() {
        let d = h.join().unwrap();
        let expect = brute::distance(
            &pose([0.0; 3], [0.0; 3]),
            &m,
            &pose([0.7 + 0.1 * k as f64, 0.0, 0.0], [0.0; 3]),
            &m,
        );
        assert!((d - expect.distance).abs() < 1e-12);
    }
}
