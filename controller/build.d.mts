export declare const CONTROLLER_BUNDLE: string;
export declare function buildController(): Promise<number>;
