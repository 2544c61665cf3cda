//! The store's schema: the migrations of each engine (`src/migrations/{sqlite,postgres}`),
//! applied in order when a store opens.

use sqlx::migrate::{Migration, MigrationType, Migrator};

fn migration(version: i64, name: &'static str, sql: &'static str) -> Migration {
    Migration::new(
        version,
        name.into(),
        MigrationType::Simple,
        sqlx::SqlStr::from_static(sql),
        false,
    )
}

pub(super) fn sqlite_migrator() -> Migrator {
    Migrator::with_migrations(vec![
        migration(
            1,
            "jobs",
            include_str!("../migrations/sqlite/0001_jobs.sql"),
        ),
        migration(
            2,
            "leases",
            include_str!("../migrations/sqlite/0002_leases.sql"),
        ),
        migration(
            3,
            "credits",
            include_str!("../migrations/sqlite/0003_credits.sql"),
        ),
        migration(
            4,
            "parity",
            include_str!("../migrations/sqlite/0004_parity.sql"),
        ),
        migration(
            5,
            "gpu_memory",
            include_str!("../migrations/sqlite/0005_gpu_memory.sql"),
        ),
        migration(
            6,
            "batches",
            include_str!("../migrations/sqlite/0006_batches.sql"),
        ),
        migration(
            7,
            "arena_sources",
            include_str!("../migrations/sqlite/0007_arena_sources.sql"),
        ),
    ])
}

pub(super) fn postgres_migrator() -> Migrator {
    Migrator::with_migrations(vec![
        migration(
            1,
            "jobs",
            include_str!("../migrations/postgres/0001_jobs.sql"),
        ),
        migration(
            2,
            "leases",
            include_str!("../migrations/postgres/0002_leases.sql"),
        ),
        migration(
            3,
            "credits",
            include_str!("../migrations/postgres/0003_credits.sql"),
        ),
        migration(
            4,
            "parity",
            include_str!("../migrations/postgres/0004_parity.sql"),
        ),
        migration(
            5,
            "gpu_memory",
            include_str!("../migrations/postgres/0005_gpu_memory.sql"),
        ),
        migration(
            6,
            "batches",
            include_str!("../migrations/postgres/0006_batches.sql"),
        ),
        migration(
            7,
            "arena_sources",
            include_str!("../migrations/postgres/0007_arena_sources.sql"),
        ),
    ])
}
